//! turnkeeper guard (skeleton).
