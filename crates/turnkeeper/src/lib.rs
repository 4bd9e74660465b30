//! turnkeeper turnkeeper (skeleton).
