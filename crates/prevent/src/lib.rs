//! turnkeeper prevent (skeleton).
