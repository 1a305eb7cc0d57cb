//! guardjit's log lines (process-wide): a Rust handler instead of stderr,
//! and which topics log.

use crate::c_string;
use crate::error::Result;
use guardjit_sys as sys;
use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, RwLock};

type Handler = Arc<dyn Fn(&str, &str) + Send + Sync>;

static HANDLER: RwLock<Option<Handler>> = RwLock::new(None);

unsafe extern "C" fn trampoline(
    _user_data: *mut c_void,
    topic: *const c_char,
    message: *const c_char,
) {
    // Take the handler out of the lock before calling it, so a handler that
    // replaces the handler does not deadlock.
    let handler = HANDLER.read().unwrap_or_else(|e| e.into_inner()).clone();
    let Some(handler) = handler else { return };
    // SAFETY: both strings live during the call (guardjit.h).
    let (topic, message) = unsafe { (CStr::from_ptr(topic), CStr::from_ptr(message)) };
    // A panic must not unwind into C: drop it.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        handler(&topic.to_string_lossy(), &message.to_string_lossy())
    }));
}

/// Sends guardjit's log lines to `handler(topic, message)` instead of
/// stderr, process-wide. `topic` is `"guards"`, `"recompiles"`,
/// `"graph_breaks"`, `"codegen"` or `"warning"`. The handler runs on
/// whichever thread logs, one message at a time, and must not call into
/// guardjit (it may call [`set_log_handler`] or [`clear_log_handler`]).
/// A panic in it is caught and ignored.
pub fn set_log_handler(handler: impl Fn(&str, &str) + Send + Sync + 'static) {
    *HANDLER.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(handler));
    // SAFETY: a 'static callback that ignores user_data.
    unsafe { sys::gj_set_log_callback(Some(trampoline), std::ptr::null_mut()) };
}

/// Restores logging to stderr. A message being logged concurrently may
/// still reach the old handler.
pub fn clear_log_handler() {
    // SAFETY: NULL restores stderr.
    unsafe { sys::gj_set_log_callback(None, std::ptr::null_mut()) };
    *HANDLER.write().unwrap_or_else(|e| e.into_inner()) = None;
}

/// Which topics log, as `GJ_LOGS` says (`"guards,recompiles"`, `"all"`,
/// `""`), replacing what `GJ_LOGS` set; warnings always log. Process-wide.
pub fn set_log_topics(spec: &str) -> Result<()> {
    let spec = c_string("set_log_topics", spec)?;
    // SAFETY: NUL-terminated, read during the call.
    unsafe { sys::gj_set_log_topics(spec.as_ptr()) };
    Ok(())
}
