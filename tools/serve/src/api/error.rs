//! Errors as JSON: `{"error": "..."}` with the right status, plus fields that locate the fault
//! (a scenario's line, column and field; a parameter's name).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

/// An error answer.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    body: Map<String, Value>,
}

impl ApiError {
    /// `{"error": message}` with `status`.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        let mut body = Map::new();
        body.insert("error".into(), Value::String(message.into()));
        ApiError { status, body }
    }

    /// Adds a field to the body.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.body.insert(key.into(), value.into());
        self
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn not_found(what: &str) -> Self {
        Self::new(StatusCode::NOT_FOUND, format!("no such {what}"))
    }

    /// A failure of the server's own (the database, the disk): logged, answered without detail.
    pub fn internal(e: impl std::fmt::Display) -> Self {
        eprintln!("rdmasim serve: {e}");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error (see the server's log)",
        )
    }

    /// An extractor's rejection (a body too large, not JSON, not UTF-8), in JSON.
    pub fn rejection(r: impl IntoResponse + std::fmt::Display) -> Self {
        let msg = r.to_string();
        let status = r.into_response().status();
        Self::new(status, msg)
    }
}

impl From<rusqlite::Error> for ApiError {
    fn from(e: rusqlite::Error) -> Self {
        ApiError::internal(format!("the database: {e}"))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, axum::Json(Value::Object(self.body))).into_response()
    }
}

/// An id in a path: a positive integer, else no such thing (404).
pub fn parse_id(s: &str, what: &str) -> Result<i64, ApiError> {
    s.parse::<i64>()
        .ok()
        .filter(|&i| i > 0)
        .ok_or_else(|| ApiError::not_found(what))
}

/// `{"error": ...}` plus a scenario's location.
pub fn rejected(r: crate::Rejection) -> ApiError {
    let mut e = ApiError::bad_request(r.error)
        .with("file", r.file)
        .with("line", r.line)
        .with("column", r.column)
        .with("message", r.message);
    if let Some(f) = r.field {
        e = e.with("field", f);
    }
    e
}

/// A JSON answer.
pub fn ok(v: Value) -> axum::Json<Value> {
    axum::Json(v)
}
