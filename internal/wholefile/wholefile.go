// Package wholefile reads the files weir reads whole (the config, the
// inventory, the syslog rules), bounded: a log file named by mistake, or a
// device such as /dev/zero, is refused rather than read into memory; and
// replaces the small state files it keeps whole (Replace).
package wholefile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// MaxBytes bounds a file weir reads whole. A config of 100,000 SNMP
// targets, or an inventory of 100,000 devices, is about 10 MB.
const MaxBytes = 64 << 20

// TooLarge refuses a file of size bytes past max; nil when it is not.
func TooLarge(path string, size, max int64) error {
	if size <= max {
		return nil
	}
	return fmt.Errorf("%s is %d bytes, more than the %d weir reads (the wrong file?)", path, size, max)
}

// Read reads the file at path, refusing it past max bytes: by its size
// when it has one (a regular file), else (a pipe, a device), or when it
// grew since its size was checked, as it is read.
func Read(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		if err := TooLarge(path, st.Size(), max); err != nil {
			return nil, err
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err // names the file
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s gave more than the %d bytes weir reads (the wrong file?)", path, max)
	}
	return data, nil
}

// Kind names what a file that is not a regular one is, for an error
// refusing it: a named pipe, a socket, a device, else a special file.
func Kind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// Replace replaces file with b by a synced temporary file renamed over
// it, then syncs the directory: a crash leaves the old file or the new
// one, whole.
func Replace(file string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a rename, nothing
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(file)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// ReadJSON decodes the JSON file at path (at most MaxBytes) into v; a
// file that is not there leaves v as it is and is no error: a state file
// before its first save.
func ReadJSON(path string, v any) error {
	b, err := Read(path, MaxBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ReplaceJSON writes v as JSON to file with Replace, making its directory
// first.
func ReplaceJSON(file string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return Replace(file, b)
}

// RetryEvery is how often SaveAgain tries a failed save again.
const RetryEvery = 30 * time.Second

// SaveAgain calls save every interval (RetryEvery if 0) while failed
// reports that the last save failed, until ctx ends: a state file a full
// disk kept from being written at start would otherwise wait for the next
// reload, which may never come before the next stop.
func SaveAgain(ctx context.Context, interval time.Duration, failed func() bool, save func()) {
	if interval <= 0 {
		interval = RetryEvery
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if failed() {
			save()
		}
	}
}
