package guardjit_test

import (
	"testing"

	gj "guardjit.dev/guardjit"
)

// The same checks with every tensor's data copied through C memory and a
// fresh frame per call: the fallback path for tensors past the direct slots.
func TestCopyPath(t *testing.T) {
	defer gj.SetMaxDirect(0)()
	defer gj.SetReuseFrames(false)()
	t.Run("MLP", TestMLPExample)
	t.Run("AbsDiv", TestAbsDivExample)
	t.Run("ManyInputs", TestManyInputs)
	t.Run("Chain", TestChainLibTensor)
	t.Run("Errors", TestErrors)
}
