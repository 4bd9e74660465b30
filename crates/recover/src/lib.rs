//! turnkeeper recover (skeleton).
