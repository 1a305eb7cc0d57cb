package guardjit

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
)

// Code is a gj_error_code: absl's canonical status codes.
type Code int

// The codes of gj_error_code, with the same values.
const (
	CodeOK                 Code = C.GJ_OK
	CodeCancelled          Code = C.GJ_CANCELLED
	CodeUnknown            Code = C.GJ_UNKNOWN
	CodeInvalidArgument    Code = C.GJ_INVALID_ARGUMENT
	CodeDeadlineExceeded   Code = C.GJ_DEADLINE_EXCEEDED
	CodeNotFound           Code = C.GJ_NOT_FOUND
	CodeAlreadyExists      Code = C.GJ_ALREADY_EXISTS
	CodePermissionDenied   Code = C.GJ_PERMISSION_DENIED
	CodeResourceExhausted  Code = C.GJ_RESOURCE_EXHAUSTED
	CodeFailedPrecondition Code = C.GJ_FAILED_PRECONDITION
	CodeAborted            Code = C.GJ_ABORTED
	CodeOutOfRange         Code = C.GJ_OUT_OF_RANGE
	CodeUnimplemented      Code = C.GJ_UNIMPLEMENTED
	CodeInternal           Code = C.GJ_INTERNAL
	CodeUnavailable        Code = C.GJ_UNAVAILABLE
	CodeDataLoss           Code = C.GJ_DATA_LOSS
	CodeUnauthenticated    Code = C.GJ_UNAUTHENTICATED
)

var codeNames = [...]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
	"NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
	"FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
	"INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
}

// String is the code's canonical name, "INVALID_ARGUMENT".
func (c Code) String() string {
	if c >= 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return fmt.Sprintf("CODE(%d)", int(c))
}

// Error is an error from guardjit: the library's code and message, or one
// this package raises before calling it (with a code from the same set).
type Error struct {
	code  Code
	msg   string
	cause error
}

// Code is the error's canonical code.
func (e *Error) Code() Code { return e.code }

// Message is the library's message (it names the node, input or argument at
// fault), without the code.
func (e *Error) Message() string { return e.msg }

func (e *Error) Error() string { return "guardjit: " + e.code.String() + ": " + e.msg }

// Unwrap returns context.Canceled or context.DeadlineExceeded when a call
// stopped because its context.Context ended, so errors.Is works with them.
func (e *Error) Unwrap() error { return e.cause }

// CodeOf is err's code: CodeOK for nil, the code of a *Error in err's chain,
// CodeUnknown otherwise.
func CodeOf(err error) Code {
	if err == nil {
		return CodeOK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.code
	}
	return CodeUnknown
}

func newError(code Code, format string, args ...any) *Error {
	return &Error{code: code, msg: fmt.Sprintf(format, args...)}
}

// takeError converts and frees a gj_error; nil for NULL.
func takeError(e *C.gj_error) *Error {
	if e == nil {
		return nil
	}
	err := &Error{
		code: Code(C.gj_error_get_code(e)),
		msg:  C.GoString(C.gj_error_message(e)),
	}
	C.gj_error_destroy(e)
	return err
}

// check is takeError as an error interface (a nil *Error must not become a
// non-nil error).
func check(e *C.gj_error) error {
	if err := takeError(e); err != nil {
		return err
	}
	return nil
}
