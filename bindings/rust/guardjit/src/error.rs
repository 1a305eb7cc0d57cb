//! `Error`: a `gj_error`'s code and message, copied out of the library.

use guardjit_sys as sys;
use std::ffi::CStr;
use std::fmt;

/// absl's canonical codes, as `gj_error_code` numbers them (`GJ_OK` is not
/// an error and has no variant).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    Cancelled,
    Unknown,
    InvalidArgument,
    DeadlineExceeded,
    NotFound,
    AlreadyExists,
    PermissionDenied,
    ResourceExhausted,
    FailedPrecondition,
    Aborted,
    OutOfRange,
    Unimplemented,
    Internal,
    Unavailable,
    DataLoss,
    Unauthenticated,
}

impl ErrorCode {
    /// The code for a raw `gj_error_code`: `None` for `GJ_OK`, `Unknown` for
    /// a number this crate does not know (a newer library).
    pub fn from_raw(code: sys::gj_error_code) -> Option<ErrorCode> {
        use ErrorCode::*;
        Some(match code {
            sys::GJ_OK => return None,
            sys::GJ_CANCELLED => Cancelled,
            sys::GJ_INVALID_ARGUMENT => InvalidArgument,
            sys::GJ_DEADLINE_EXCEEDED => DeadlineExceeded,
            sys::GJ_NOT_FOUND => NotFound,
            sys::GJ_ALREADY_EXISTS => AlreadyExists,
            sys::GJ_PERMISSION_DENIED => PermissionDenied,
            sys::GJ_RESOURCE_EXHAUSTED => ResourceExhausted,
            sys::GJ_FAILED_PRECONDITION => FailedPrecondition,
            sys::GJ_ABORTED => Aborted,
            sys::GJ_OUT_OF_RANGE => OutOfRange,
            sys::GJ_UNIMPLEMENTED => Unimplemented,
            sys::GJ_INTERNAL => Internal,
            sys::GJ_UNAVAILABLE => Unavailable,
            sys::GJ_DATA_LOSS => DataLoss,
            sys::GJ_UNAUTHENTICATED => Unauthenticated,
            _ => Unknown,
        })
    }

    /// The raw `gj_error_code`.
    pub fn to_raw(self) -> sys::gj_error_code {
        use ErrorCode::*;
        match self {
            Cancelled => sys::GJ_CANCELLED,
            Unknown => sys::GJ_UNKNOWN,
            InvalidArgument => sys::GJ_INVALID_ARGUMENT,
            DeadlineExceeded => sys::GJ_DEADLINE_EXCEEDED,
            NotFound => sys::GJ_NOT_FOUND,
            AlreadyExists => sys::GJ_ALREADY_EXISTS,
            PermissionDenied => sys::GJ_PERMISSION_DENIED,
            ResourceExhausted => sys::GJ_RESOURCE_EXHAUSTED,
            FailedPrecondition => sys::GJ_FAILED_PRECONDITION,
            Aborted => sys::GJ_ABORTED,
            OutOfRange => sys::GJ_OUT_OF_RANGE,
            Unimplemented => sys::GJ_UNIMPLEMENTED,
            Internal => sys::GJ_INTERNAL,
            Unavailable => sys::GJ_UNAVAILABLE,
            DataLoss => sys::GJ_DATA_LOSS,
            Unauthenticated => sys::GJ_UNAUTHENTICATED,
        }
    }

    /// absl's name: `"INVALID_ARGUMENT"`.
    pub fn name(self) -> &'static str {
        use ErrorCode::*;
        match self {
            Cancelled => "CANCELLED",
            Unknown => "UNKNOWN",
            InvalidArgument => "INVALID_ARGUMENT",
            DeadlineExceeded => "DEADLINE_EXCEEDED",
            NotFound => "NOT_FOUND",
            AlreadyExists => "ALREADY_EXISTS",
            PermissionDenied => "PERMISSION_DENIED",
            ResourceExhausted => "RESOURCE_EXHAUSTED",
            FailedPrecondition => "FAILED_PRECONDITION",
            Aborted => "ABORTED",
            OutOfRange => "OUT_OF_RANGE",
            Unimplemented => "UNIMPLEMENTED",
            Internal => "INTERNAL",
            Unavailable => "UNAVAILABLE",
            DataLoss => "DATA_LOSS",
            Unauthenticated => "UNAUTHENTICATED",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed guardjit call: the library's code and message (which names the
/// node, input or argument at fault), or an argument this crate refused
/// before calling the library (`InvalidArgument`, message starting with the
/// Rust function's name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    code: ErrorCode,
    message: String,
}

/// `Result<T, guardjit::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error with this code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Error {
        Error {
            code,
            message: message.into(),
        }
    }

    pub(crate) fn invalid_argument(message: impl Into<String>) -> Error {
        Error::new(ErrorCode::InvalidArgument, message)
    }

    pub fn code(&self) -> ErrorCode {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// Copies the code and message out of `error` and destroys it.
    ///
    /// # Safety
    /// `error` is a non-NULL `gj_error*` the caller owns; it is freed here.
    pub unsafe fn from_raw(error: *mut sys::gj_error) -> Error {
        // SAFETY: the caller hands over a live error; its message lives as
        // long as the error, which is destroyed only after the copy.
        unsafe {
            let code =
                ErrorCode::from_raw(sys::gj_error_get_code(error)).unwrap_or(ErrorCode::Unknown);
            let message = CStr::from_ptr(sys::gj_error_message(error))
                .to_string_lossy()
                .into_owned();
            sys::gj_error_destroy(error);
            Error { code, message }
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Error {}

/// `Ok(())` for NULL, else the error (destroyed).
///
/// # Safety
/// `error` is NULL or a `gj_error*` the caller owns.
pub(crate) unsafe fn check(error: *mut sys::gj_error) -> Result<()> {
    if error.is_null() {
        Ok(())
    } else {
        // SAFETY: non-NULL and owned, per the caller.
        Err(unsafe { Error::from_raw(error) })
    }
}
