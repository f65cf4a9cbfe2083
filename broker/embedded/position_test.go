package embedded

import (
	"testing"

	"github.com/weirnet/weir/internal/brokertest"
)

func TestPosition(t *testing.T) {
	b, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	brokertest.Position(t, b)
}
