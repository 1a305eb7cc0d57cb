package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"unsafe"

	gj "guardjit.dev/guardjit"
)

// namedTensor is a request input or a response output.
type namedTensor struct {
	Name string
	gj.Tensor
}

// limits bound what one request may ask the server to allocate.
type limits struct {
	maxElements int64 // per tensor
	maxHeader   int   // binary header bytes
}

// badRequest is a client error (HTTP 400) raised while decoding.
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

func badf(format string, args ...any) error { return &badRequest{fmt.Sprintf(format, args...)} }

// tensorHeader is one tensor's metadata, in JSON bodies (with data) and in
// the JSON header of binary bodies (without).
type tensorHeader struct {
	Name  string          `json:"name"`
	DType string          `json:"dtype"`
	Shape []int64         `json:"shape"`
	Data  json.RawMessage `json:"data,omitempty"`
}

// allocFor validates a header against the limits and returns a zeroed
// tensor for it. A shape the library refuses (a negative size, an element
// count past int64) gets a tensor with no data, so the call reports the
// library's own message.
func allocFor(h *tensorHeader, lim limits) (gj.Tensor, error) {
	d, err := gj.ParseDType(h.DType)
	if err != nil {
		return gj.Tensor{}, badf("tensor %q: unknown dtype %q", h.Name, h.DType)
	}
	if h.Shape == nil {
		h.Shape = []int64{}
	}
	n, ok := gj.NumElements(h.Shape)
	if !ok {
		return gj.Tensor{DType: d, Shape: h.Shape}, nil
	}
	if n > lim.maxElements {
		return gj.Tensor{}, badf("tensor %q: %d elements, more than the server's limit of %d", h.Name, n, lim.maxElements)
	}
	return gj.NewTensor(d, h.Shape...), nil
}

// --- JSON ------------------------------------------------------------------

type jsonRequest struct {
	Inputs []tensorHeader `json:"inputs"`
}

func decodeJSON(body []byte, lim limits) ([]namedTensor, error) {
	var req jsonRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return nil, badf("malformed JSON request: %v", err)
	}
	if dec.More() {
		return nil, badf("malformed JSON request: data after the object")
	}
	out := make([]namedTensor, len(req.Inputs))
	for i := range req.Inputs {
		h := &req.Inputs[i]
		t, err := allocFor(h, lim)
		if err != nil {
			return nil, err
		}
		if t.Data != nil {
			if err := fillJSON(t, h); err != nil {
				return nil, err
			}
		}
		out[i] = namedTensor{h.Name, t}
	}
	return out, nil
}

// fillJSON parses h.Data (a flat or nested array of numbers; booleans for
// bool; "NaN", "Infinity", "-Infinity" for floats) into t.
func fillJSON(t gj.Tensor, h *tensorHeader) error {
	var raw any
	dec := json.NewDecoder(bytes.NewReader(h.Data))
	dec.UseNumber()
	if len(h.Data) == 0 {
		raw = []any{}
	} else if err := dec.Decode(&raw); err != nil {
		return badf("tensor %q: malformed data: %v", h.Name, err)
	}
	var flat []any
	var flatten func(v any) error
	flatten = func(v any) error {
		if arr, ok := v.([]any); ok {
			for _, e := range arr {
				if err := flatten(e); err != nil {
					return err
				}
			}
			return nil
		}
		flat = append(flat, v)
		if int64(len(flat)) > t.NumElements() {
			return badf("tensor %q: more than the %d values of shape %v", h.Name, t.NumElements(), h.Shape)
		}
		return nil
	}
	if _, ok := raw.([]any); !ok && len(h.Shape) > 0 {
		return badf("tensor %q: data must be an array", h.Name)
	}
	if err := flatten(raw); err != nil {
		return err
	}
	if int64(len(flat)) != t.NumElements() {
		return badf("tensor %q: %d values for shape %v (%d elements)", h.Name, len(flat), h.Shape, t.NumElements())
	}
	size := t.DType.Size()
	for i, v := range flat {
		if err := putValue(t.DType, t.Data[i*size:(i+1)*size], v); err != nil {
			return badf("tensor %q: value %d: %v", h.Name, i, err)
		}
	}
	return nil
}

func putValue(d gj.DType, dst []byte, v any) error {
	le := binary.LittleEndian
	if d == gj.Bool {
		switch x := v.(type) {
		case bool:
			dst[0] = 0
			if x {
				dst[0] = 1
			}
			return nil
		case json.Number:
			if x == "0" || x == "1" {
				dst[0] = x[0] - '0'
				return nil
			}
		}
		return fmt.Errorf("%v is not a bool", v)
	}
	var f float64
	var isInt bool
	var i int64
	switch x := v.(type) {
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			i, isInt, f = n, true, float64(n)
		} else if g, err := strconv.ParseFloat(string(x), 64); err == nil {
			f = g
		} else {
			return fmt.Errorf("%s is not a number", x)
		}
	case string:
		switch x {
		case "NaN":
			f = math.NaN()
		case "Infinity":
			f = math.Inf(1)
		case "-Infinity":
			f = math.Inf(-1)
		default:
			return fmt.Errorf("%q is not a number", x)
		}
	default:
		return fmt.Errorf("%v is not a number", v)
	}
	intRange := func(lo, hi int64) error {
		if !isInt || i < lo || i > hi {
			return fmt.Errorf("%v is not a %s", v, d)
		}
		return nil
	}
	switch d {
	case gj.Float32:
		le.PutUint32(dst, math.Float32bits(float32(f)))
	case gj.Float64:
		le.PutUint64(dst, math.Float64bits(f))
	case gj.Float16:
		le.PutUint16(dst, float16Bits(float32(f)))
	case gj.BFloat16:
		le.PutUint16(dst, bfloat16Bits(float32(f)))
	case gj.Int8:
		if err := intRange(math.MinInt8, math.MaxInt8); err != nil {
			return err
		}
		dst[0] = byte(int8(i))
	case gj.Uint8:
		if err := intRange(0, math.MaxUint8); err != nil {
			return err
		}
		dst[0] = byte(i)
	case gj.Int16:
		if err := intRange(math.MinInt16, math.MaxInt16); err != nil {
			return err
		}
		le.PutUint16(dst, uint16(int16(i)))
	case gj.Int32:
		if err := intRange(math.MinInt32, math.MaxInt32); err != nil {
			return err
		}
		le.PutUint32(dst, uint32(int32(i)))
	case gj.Int64:
		if err := intRange(math.MinInt64, math.MaxInt64); err != nil {
			return err
		}
		le.PutUint64(dst, uint64(i))
	}
	return nil
}

// appendJSONTensor writes {"name":..,"dtype":..,"shape":[..],"data":[..]}.
func appendJSONTensor(b []byte, t namedTensor) []byte {
	name, _ := json.Marshal(t.Name)
	b = append(b, `{"name":`...)
	b = append(b, name...)
	b = append(b, `,"dtype":"`...)
	b = append(b, t.DType.String()...)
	b = append(b, `","shape":[`...)
	for i, s := range t.Shape {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, s, 10)
	}
	b = append(b, `],"data":[`...)
	size := t.DType.Size()
	le := binary.LittleEndian
	for i := 0; i < int(t.NumElements()); i++ {
		if i > 0 {
			b = append(b, ',')
		}
		e := t.Data[i*size : (i+1)*size]
		switch t.DType {
		case gj.Float32:
			b = appendFloat(b, float64(math.Float32frombits(le.Uint32(e))), 32)
		case gj.Float64:
			b = appendFloat(b, math.Float64frombits(le.Uint64(e)), 64)
		case gj.Float16:
			b = appendFloat(b, float64(float16Value(le.Uint16(e))), 32)
		case gj.BFloat16:
			b = appendFloat(b, float64(math.Float32frombits(uint32(le.Uint16(e))<<16)), 32)
		case gj.Int8:
			b = strconv.AppendInt(b, int64(int8(e[0])), 10)
		case gj.Uint8:
			b = strconv.AppendInt(b, int64(e[0]), 10)
		case gj.Int16:
			b = strconv.AppendInt(b, int64(int16(le.Uint16(e))), 10)
		case gj.Int32:
			b = strconv.AppendInt(b, int64(int32(le.Uint32(e))), 10)
		case gj.Int64:
			b = strconv.AppendInt(b, int64(le.Uint64(e)), 10)
		case gj.Bool:
			b = strconv.AppendBool(b, e[0] != 0)
		}
	}
	return append(b, "]}"...)
}

func appendFloat(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits)
}

func encodeJSON(model string, outs []namedTensor) []byte {
	name, _ := json.Marshal(model)
	b := append([]byte(`{"model":`), name...)
	b = append(b, `,"outputs":[`...)
	for i, t := range outs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONTensor(b, t)
	}
	return append(b, "]}\n"...)
}

// --- binary ----------------------------------------------------------------
//
// [8 bytes]  N, little-endian uint64: the length of the JSON header
// [N bytes]  {"tensors":[{"name":"x","dtype":"float32","shape":[2,8]},...]}
// [...]      each tensor's data in header order: row-major, little-endian,
//            elements x itemsize bytes, no padding; nothing after the last.

type binaryHeader struct {
	Tensors []tensorHeader `json:"tensors"`
}

func decodeBinary(r io.Reader, lim limits) ([]namedTensor, error) {
	var n uint64
	if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
		return nil, badf("binary request: no header length: %v", err)
	}
	if n > uint64(lim.maxHeader) {
		return nil, badf("binary request: header of %d bytes, more than %d", n, lim.maxHeader)
	}
	hb := make([]byte, n)
	if _, err := io.ReadFull(r, hb); err != nil {
		return nil, badf("binary request: header shorter than %d bytes: %v", n, err)
	}
	var h binaryHeader
	dec := json.NewDecoder(bytes.NewReader(hb))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, badf("binary request: malformed header: %v", err)
	}
	out := make([]namedTensor, len(h.Tensors))
	for i := range h.Tensors {
		th := &h.Tensors[i]
		if len(th.Data) > 0 {
			return nil, badf("binary request: tensor %q has data in the header", th.Name)
		}
		t, err := allocFor(th, lim)
		if err != nil {
			return nil, err
		}
		if _, err := io.ReadFull(r, t.Data); err != nil {
			return nil, badf("binary request: tensor %q: body ends before its %d bytes of data", th.Name, len(t.Data))
		}
		out[i] = namedTensor{th.Name, t}
	}
	if extra, _ := io.Copy(io.Discard, io.LimitReader(r, 1)); extra > 0 {
		return nil, badf("binary request: bytes after the last tensor's data")
	}
	return out, nil
}

func encodeBinary(w io.Writer, outs []namedTensor) error {
	h := binaryHeader{Tensors: make([]tensorHeader, len(outs))}
	for i, t := range outs {
		h.Tensors[i] = tensorHeader{Name: t.Name, DType: t.DType.String(), Shape: t.Shape}
	}
	hb, err := json.Marshal(h)
	if err != nil {
		return err
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(hb)))
	if _, err := w.Write(append(n[:], hb...)); err != nil {
		return err
	}
	for _, t := range outs {
		if _, err := w.Write(t.Data); err != nil {
			return err
		}
	}
	return nil
}

// --- half precision ----------------------------------------------------------

// float16Bits rounds f to IEEE binary16 (nearest, ties to even).
func float16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	switch {
	case exp == 0xff: // inf, NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp-127+15 >= 0x1f: // overflow
		return sign | 0x7c00
	case exp-127+15 <= 0: // subnormal or zero: r units of 2^-24
		sh := uint32(126 - exp)
		if sh > 31 {
			return sign
		}
		m := mant | 0x800000
		r := m >> sh
		rem := m & (1<<sh - 1)
		half := uint32(1) << (sh - 1)
		if rem > half || (rem == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	e := uint32(exp - 127 + 15)
	r := e<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++ // may carry into the exponent: still correct, up to inf
	}
	return sign | uint16(r)
}

func float16Value(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		v := float32(mant) / (1 << 24)
		if sign != 0 {
			return -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// bfloat16Bits rounds f to bfloat16 (nearest, ties to even; NaN stays NaN).
func bfloat16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// littleEndian: the binary format and JSON encoding assume the host's byte
// order is little-endian, as tensors are in the host's order.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()
