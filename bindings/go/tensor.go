package guardjit

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
	"unsafe"
)

// DType is an element type, numbered as gj_dtype.
type DType int32

// The element types of gj_dtype, with the same values.
const (
	Float32  DType = C.GJ_DTYPE_FLOAT32
	Float64  DType = C.GJ_DTYPE_FLOAT64
	Float16  DType = C.GJ_DTYPE_FLOAT16
	BFloat16 DType = C.GJ_DTYPE_BFLOAT16
	Int8     DType = C.GJ_DTYPE_INT8
	Uint8    DType = C.GJ_DTYPE_UINT8
	Int16    DType = C.GJ_DTYPE_INT16
	Int32    DType = C.GJ_DTYPE_INT32
	Int64    DType = C.GJ_DTYPE_INT64
	Bool     DType = C.GJ_DTYPE_BOOL
)

type dtypeInfo struct {
	name string
	code uint8 // DLDataTypeCode
	bits uint8
}

var dtypes = map[DType]dtypeInfo{
	Float32:  {"float32", C.kDLFloat, 32},
	Float64:  {"float64", C.kDLFloat, 64},
	Float16:  {"float16", C.kDLFloat, 16},
	BFloat16: {"bfloat16", C.kDLBfloat, 16},
	Int8:     {"int8", C.kDLInt, 8},
	Uint8:    {"uint8", C.kDLUInt, 8},
	Int16:    {"int16", C.kDLInt, 16},
	Int32:    {"int32", C.kDLInt, 32},
	Int64:    {"int64", C.kDLInt, 64},
	Bool:     {"bool", C.GJ_DL_BOOL, 8},
}

// String is the dtype's name as torch spells it: "float32", "bfloat16".
func (d DType) String() string {
	if info, ok := dtypes[d]; ok {
		return info.name
	}
	return fmt.Sprintf("dtype(%d)", int32(d))
}

// Size is the bytes of one element (0 for an unknown dtype).
func (d DType) Size() int { return int(dtypes[d].bits / 8) }

// Valid reports whether d is one of the dtypes above.
func (d DType) Valid() bool { _, ok := dtypes[d]; return ok }

// ParseDType is the inverse of String (case-insensitive).
func ParseDType(s string) (DType, error) {
	for d, info := range dtypes {
		if strings.EqualFold(info.name, s) {
			return d, nil
		}
	}
	return 0, newError(CodeInvalidArgument, "unknown dtype %q", s)
}

func dtypeFromDL(t C.DLDataType) (DType, bool) {
	for d, info := range dtypes {
		if uint8(t.code) == info.code && uint8(t.bits) == info.bits && t.lanes == 1 {
			return d, true
		}
	}
	return 0, false
}

// NumElements is the product of shape, and false when a size is negative or
// the product overflows int64.
func NumElements(shape []int64) (int64, bool) {
	n := uint64(1)
	for _, s := range shape {
		if s < 0 {
			return 0, false
		}
		hi, lo := bits.Mul64(n, uint64(s))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		n = lo
	}
	return int64(n), true
}

// Spec is a tensor's metadata without data: what Precompile and
// Graph.CompileReport read.
type Spec struct {
	DType DType
	Shape []int64
}

// Tensor is a dense, row-major (C-contiguous) tensor whose elements are in
// Data, in the machine's byte order. Data may be Go memory (a Go slice) or a
// view of C memory (LibTensor.View). Its start must be aligned to the element
// size; NewTensor and TensorOf guarantee that.
//
// A tensor whose memory Go cannot hold (CUDA device memory, pinned host
// memory from a CUDA library) has nil Data, its address in DevicePtr and its
// device in Device (DeviceTensor makes one). The zero Device is the host.
type Tensor struct {
	DType DType
	Shape []int64
	Data  []byte
	// Device is where the data is: the zero value and CPU() are host
	// memory (Data); CUDA(i) and CUDAHost() need DevicePtr.
	Device Device
	// DevicePtr is the first element's address when Data is nil and the
	// memory is not Go's: a CUdeviceptr for CUDA(i).
	DevicePtr uintptr
}

// DeviceTensor is a tensor over memory Go does not own: CUDA device memory
// (a CUdeviceptr from a CUDA library), pinned host memory (CUDAHost()), or C
// host memory (CPU()). The caller keeps the memory valid, and unused by
// others, until the call has run (for CUDA: until the call's stream has run
// its work).
func DeviceTensor(ptr uintptr, device Device, dtype DType, shape ...int64) Tensor {
	return Tensor{DType: dtype, Shape: shape, Device: device, DevicePtr: ptr}
}

// onHost reports whether the host can read t's memory.
func (t Tensor) onHost() bool { return t.Device.Type != C.kDLCUDA }

// Spec is t's metadata.
func (t Tensor) Spec() Spec { return Spec{t.DType, t.Shape} }

// NumElements is the product of t.Shape (0 if it is invalid).
func (t Tensor) NumElements() int64 { n, _ := NumElements(t.Shape); return n }

func (t Tensor) String() string {
	return fmt.Sprintf("%s%v (%d bytes)", t.DType, t.Shape, len(t.Data))
}

// NewTensor is a zeroed tensor in Go memory, 8-byte aligned. It panics on a
// negative or overflowing shape or an unknown dtype, as make does.
func NewTensor(dtype DType, shape ...int64) Tensor {
	n, ok := NumElements(shape)
	if !ok || !dtype.Valid() {
		panic(fmt.Sprintf("guardjit.NewTensor: invalid %s%v", dtype, shape))
	}
	nbytes := n * int64(dtype.Size())
	if nbytes/int64(dtype.Size()) != n {
		panic(fmt.Sprintf("guardjit.NewTensor: %s%v is too large", dtype, shape))
	}
	return Tensor{DType: dtype, Shape: append([]int64(nil), shape...), Data: alignedBytes(int(nbytes))}
}

// alignedBytes is a zeroed []byte of n bytes starting on an 8-byte boundary.
func alignedBytes(n int) []byte {
	if n == 0 {
		return []byte{}
	}
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
}

// Element is a Go type that holds one tensor element. Float16 and BFloat16
// elements are their bit patterns as uint16.
type Element interface {
	float32 | float64 | int8 | uint8 | int16 | uint16 | int32 | int64 | bool
}

// dtypeOf is the dtype a Go element type maps to (uint16: Float16's bits).
func dtypeOf[T Element]() DType {
	var z T
	switch any(z).(type) {
	case float32:
		return Float32
	case float64:
		return Float64
	case int8:
		return Int8
	case uint8:
		return Uint8
	case int16:
		return Int16
	case uint16:
		return Float16
	case int32:
		return Int32
	case int64:
		return Int64
	}
	return Bool
}

// TensorOf makes a tensor that shares data's memory (no copy): for
// TensorOf([]float32{1, 2, 3, 4, 5, 6}, 2, 3), a float32[2, 3]. Use
// TensorOfDType for Float16/BFloat16 bit patterns and named element types.
// Panics if len(data) is not the product of shape.
func TensorOf[T Element](data []T, shape ...int64) Tensor {
	return TensorOfDType(dtypeOf[T](), data, shape...)
}

// TensorOfDType is TensorOf with an explicit dtype, whose size must be the
// size of T (BFloat16 with []uint16, say).
func TensorOfDType[T Element](dtype DType, data []T, shape ...int64) Tensor {
	var z T
	n, ok := NumElements(shape)
	if !ok || n != int64(len(data)) || dtype.Size() != int(unsafe.Sizeof(z)) {
		panic(fmt.Sprintf("guardjit.TensorOf: %d %T elements for %s%v", len(data), z, dtype, shape))
	}
	var b []byte
	if len(data) > 0 {
		b = unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), len(data)*int(unsafe.Sizeof(z)))
	} else {
		b = []byte{}
	}
	return Tensor{DType: dtype, Shape: append([]int64(nil), shape...), Data: b}
}

// Values views t.Data as []T without copying. T must match t.DType
// (float32 for Float32, bool for Bool, uint16 for Float16 and BFloat16).
func Values[T Element](t Tensor) ([]T, error) {
	var z T
	size := int(unsafe.Sizeof(z))
	want := dtypeOf[T]()
	if want != t.DType && !(want == Float16 && t.DType == BFloat16) {
		return nil, newError(CodeInvalidArgument, "cannot view %s as %T", t.DType, z)
	}
	if len(t.Data)%size != 0 {
		return nil, newError(CodeInvalidArgument, "%d bytes are not a whole number of %s", len(t.Data), t.DType)
	}
	if len(t.Data) == 0 {
		return []T{}, nil
	}
	if uintptr(unsafe.Pointer(&t.Data[0]))%uintptr(size) != 0 {
		return nil, newError(CodeInvalidArgument, "%s data is not aligned to %d bytes", t.DType, size)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&t.Data[0])), len(t.Data)/size), nil
}
