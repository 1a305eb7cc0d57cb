package guardjit

/*
#cgo pkg-config: guardjit
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"sync"
	"unsafe"
)

// Version is the "MAJOR.MINOR.PATCH" version of the loaded library.
func Version() string { return C.GoString(C.gj_version()) }

// APIVersion is the C API version of the loaded library (it may be newer than
// the header this package was built against: see HeaderAPIVersion).
func APIVersion() (major, minor int) {
	v := uint32(C.gj_api_version())
	return int(v >> 16), int(v & 0xffff)
}

// HeaderAPIVersion is the C API version of the header this package was built
// against.
func HeaderAPIVersion() (major, minor int) {
	return int(C.GJ_API_VERSION_MAJOR), int(C.GJ_API_VERSION_MINOR)
}

var (
	logMu      sync.RWMutex
	logHandler func(topic, message string)
)

// SetLogHandler sends guardjit's log lines to h instead of stderr; nil
// restores stderr. The topic is "guards", "recompiles", "graph_breaks",
// "codegen", "cudagraphs" or "warning". h is called from whichever thread
// logs (possibly a library thread, possibly inside a Call), one message at a
// time; it must be quick and must not call into this package. Process-wide.
func SetLogHandler(h func(topic, message string)) {
	logMu.Lock()
	logHandler = h
	logMu.Unlock()
	enable := C.int(0)
	if h != nil {
		enable = 1
	}
	C.gjgo_set_log_handler(enable)
}

// SetLogTopics chooses which topics log, as the GJ_LOGS environment variable
// does ("guards,recompiles", "all", ""); warnings always log. Process-wide.
func SetLogTopics(spec string) {
	cs := C.CString(spec)
	defer C.free(unsafe.Pointer(cs))
	C.gj_set_log_topics(cs)
}

//export gjgoLog
func gjgoLog(topic, message *C.char) {
	logMu.RLock()
	h := logHandler
	logMu.RUnlock()
	if h != nil {
		h(C.GoString(topic), C.GoString(message))
	}
}
