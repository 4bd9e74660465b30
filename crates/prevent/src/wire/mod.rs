//! The rules of the OpenAI-style wire families (see `turnkeeper_model::wire`), each over its own
//! view of the body and its own splice [`Plan`](turnkeeper_model::wire::Plan).

pub mod responses;
