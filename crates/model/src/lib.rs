//! turnkeeper model (skeleton).
