//! Checking and repairing the OpenAI-style families, whose bodies are read by
//! [`turnkeeper_model::wire`] rather than into a [`Transcript`](turnkeeper_model::Transcript).
//! A repair is a [`Plan`](turnkeeper_model::wire::Plan) of byte-range edits, so what a rule does
//! not change is copied byte for byte, and a body nothing was planned for is the input itself.

pub mod converse;
