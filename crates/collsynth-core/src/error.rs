//! One error type for the whole core. The CLI maps `BadInput` to exit status 2 and the
//! others to 1; the Python binding maps them to `collsynth.BadInput` / `collsynth.InternalError`.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CollsynthError {
    /// The user's input is wrong (file, spec, option); the message names the problem and where.
    BadInput(String),
    /// The input is well formed but the request has no solution (e.g. an option that does not apply).
    Infeasible(String),
    /// A bug or a broken invariant inside collsynth.
    Internal(String),
    /// The caller asked the running call to stop (`budget::cancel`, Ctrl-C in the CLI).
    Cancelled,
}

pub type Result<T> = std::result::Result<T, CollsynthError>;

impl CollsynthError {
    pub fn bad(msg: impl Into<String>) -> Self {
        CollsynthError::BadInput(msg.into())
    }
    pub fn internal(msg: impl Into<String>) -> Self {
        CollsynthError::Internal(msg.into())
    }
    /// Prefix the message with a location (`file.json: links[3]: ...`).
    pub fn context(self, location: &str) -> Self {
        match self {
            CollsynthError::BadInput(m) => CollsynthError::BadInput(format!("{location}: {m}")),
            CollsynthError::Infeasible(m) => CollsynthError::Infeasible(format!("{location}: {m}")),
            CollsynthError::Internal(m) => CollsynthError::Internal(format!("{location}: {m}")),
            CollsynthError::Cancelled => CollsynthError::Cancelled,
        }
    }
    pub fn message(&self) -> &str {
        match self {
            CollsynthError::BadInput(m) | CollsynthError::Infeasible(m) | CollsynthError::Internal(m) => m,
            CollsynthError::Cancelled => "interrupted",
        }
    }
}

impl fmt::Display for CollsynthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for CollsynthError {}

/// Shorthand for `Err(CollsynthError::BadInput(format!(...)))`.
#[macro_export]
macro_rules! bad_input {
    ($($arg:tt)*) => { Err($crate::error::CollsynthError::BadInput(format!($($arg)*))) };
}
