package guardjit_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// examplesDir is the repository's example graphs.
var examplesDir = filepath.Join("..", "..", "examples")

func examplePath(name string) string { return filepath.Join(examplesDir, name) }

// constantsOf reads the float32 constants of a .pbtxt example (the
// `constants { name: ... data: "..." }` blocks), to compute expected values
// in the test independently of the library.
func constantsOf(t *testing.T, file string) map[string][]float32 {
	t.Helper()
	text, err := os.ReadFile(examplePath(file))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?s)constants \{\s*name: "([^"]+)".*?data: "((?:[^"\\]|\\.)*)"`)
	out := map[string][]float32{}
	for _, m := range re.FindAllSubmatch(text, -1) {
		raw := unescapeProtoText(t, string(m[2]))
		vals := make([]float32, len(raw)/4)
		for i := range vals {
			vals[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		out[string(m[1])] = vals
	}
	return out
}

// unescapeProtoText undoes protobuf text format's bytes escaping.
func unescapeProtoText(t *testing.T, s string) []byte {
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b = append(b, s[i])
			continue
		}
		i++
		switch c := s[i]; {
		case c >= '0' && c <= '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 8)
			b = append(b, byte(v))
			i = j - 1
		case c == 'x':
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b = append(b, byte(v))
			i += 2
		case c == 'n':
			b = append(b, '\n')
		case c == 'r':
			b = append(b, '\r')
		case c == 't':
			b = append(b, '\t')
		case c == '\\', c == '"', c == '\'':
			b = append(b, c)
		default:
			t.Fatalf("unknown escape \\%c", c)
		}
	}
	return b
}

// mlpReference computes examples/mlp.pbtxt in float64:
// relu(x W1^T + b1) W2^T + b2 for x of shape [batch, 8].
func mlpReference(w map[string][]float32, x []float32, batch int) []float64 {
	w1, b1, w2, b2 := w["fc1_weight"], w["fc1_bias"], w["fc2_weight"], w["fc2_bias"]
	out := make([]float64, batch*4)
	for r := 0; r < batch; r++ {
		var h [16]float64
		for j := 0; j < 16; j++ {
			s := float64(b1[j])
			for k := 0; k < 8; k++ {
				s += float64(x[r*8+k]) * float64(w1[j*8+k])
			}
			h[j] = math.Max(s, 0)
		}
		for j := 0; j < 4; j++ {
			s := float64(b2[j])
			for k := 0; k < 16; k++ {
				s += h[k] * float64(w2[j*16+k])
			}
			out[r*4+j] = s
		}
	}
	return out
}
