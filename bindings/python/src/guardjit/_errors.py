"""guardjit's errors as Python exceptions: one class per absl canonical code."""
import enum


class ErrorCode(enum.IntEnum):
    """gj_error_code (absl's canonical codes)."""

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15
    UNAUTHENTICATED = 16


class Error(Exception):
    """An error the library returned: `code` (ErrorCode) and `message`.

    Catch a subclass (InvalidArgumentError, UnimplementedError, ...) for one
    code, or Error for all.
    """

    code = ErrorCode.UNKNOWN

    def __init__(self, code, message):
        super().__init__(f"{ErrorCode(code).name}: {message}")
        self.code = ErrorCode(code)
        self.message = message


def _subclass(code):
    name = "".join(part.capitalize() for part in code.name.split("_")) + "Error"
    return type(name, (Error,), {"code": code, "__doc__": f"{code.name} from guardjit.",
                                 "__module__": "guardjit"})


_BY_CODE = {code: _subclass(code) for code in ErrorCode if code != ErrorCode.OK}

CancelledError = _BY_CODE[ErrorCode.CANCELLED]
UnknownError = _BY_CODE[ErrorCode.UNKNOWN]
InvalidArgumentError = _BY_CODE[ErrorCode.INVALID_ARGUMENT]
DeadlineExceededError = _BY_CODE[ErrorCode.DEADLINE_EXCEEDED]
NotFoundError = _BY_CODE[ErrorCode.NOT_FOUND]
AlreadyExistsError = _BY_CODE[ErrorCode.ALREADY_EXISTS]
PermissionDeniedError = _BY_CODE[ErrorCode.PERMISSION_DENIED]
ResourceExhaustedError = _BY_CODE[ErrorCode.RESOURCE_EXHAUSTED]
FailedPreconditionError = _BY_CODE[ErrorCode.FAILED_PRECONDITION]
AbortedError = _BY_CODE[ErrorCode.ABORTED]
OutOfRangeError = _BY_CODE[ErrorCode.OUT_OF_RANGE]
UnimplementedError = _BY_CODE[ErrorCode.UNIMPLEMENTED]
InternalError = _BY_CODE[ErrorCode.INTERNAL]
UnavailableError = _BY_CODE[ErrorCode.UNAVAILABLE]
DataLossError = _BY_CODE[ErrorCode.DATA_LOSS]
UnauthenticatedError = _BY_CODE[ErrorCode.UNAUTHENTICATED]


def from_code(code, message):
    """The exception instance for a library error (called by _native)."""
    cls = _BY_CODE.get(code)
    if cls is None:
        return Error(ErrorCode.UNKNOWN, f"(code {code}) {message}")
    return cls(code, message)
