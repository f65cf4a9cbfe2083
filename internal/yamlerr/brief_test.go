package yamlerr

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

func TestBrief(t *testing.T) {
	lines := func(n int) error {
		var errs []error
		for i := range n {
			errs = append(errs, fmt.Errorf("f.yaml:%d: wrong", i+1))
		}
		return errors.Join(errs...)
	}
	if err := lines(BriefLines); Brief(err) != err {
		t.Errorf("%d lines changed", BriefLines)
	}
	err := fmt.Errorf("%w\n%w", lines(3000), fs.ErrNotExist)
	b := Brief(err)
	if got := strings.Count(b.Error(), "\n"); got != BriefLines {
		t.Errorf("%d lines kept; want %d:\n%s", got, BriefLines, b)
	}
	if !strings.HasSuffix(b.Error(), "f.yaml:20: wrong\n... and 2981 more (weir check -c FILE lists them all)") {
		t.Errorf("brief:\n%s", b)
	}
	if !errors.Is(b, fs.ErrNotExist) {
		t.Error("errors.Is does not see through")
	}
	if Brief(nil) != nil {
		t.Error("nil")
	}
}
