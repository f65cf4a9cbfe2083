package yamlerr

import (
	"fmt"
	"strings"
)

// BriefLines is how many of an error's lines Brief keeps.
const BriefLines = 20

// Brief is err for a log line: its first BriefLines lines (the loaders
// give one a mistake) and how many more there are. A file of thousands of
// mistakes (a generated file gone wrong, the wrong file named) would
// otherwise be one log line of hundreds of kilobytes, which log shippers
// cut or drop. errors.Is and As see through it; weir check lists them all.
func Brief(err error) error {
	if err == nil {
		return nil
	}
	s := err.Error()
	i, n := 0, 0
	for n < BriefLines {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			return err
		}
		i += j + 1
		n++
	}
	more := strings.Count(s[i:], "\n") + 1
	return &brief{err: err, text: fmt.Sprintf("%s... and %d more (weir check -c FILE lists them all)", s[:i], more)}
}

type brief struct {
	err  error
	text string
}

func (b *brief) Error() string { return b.text }
func (b *brief) Unwrap() error { return b.err }
