package trap

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/weirnet/weir/configs"
	"github.com/weirnet/weir/internal/wholefile"
)

// engineState is what the receiver keeps of its SNMP engine across
// restarts (RFC 3414 section 2.2): its ID, and how many times it started.
// v3 senders localise their informs to the engine ID they discovered, and
// Net-SNMP does not discover again when an inform is answered "unknown
// engine ID": with a new ID at every start, a running agent's informs
// were lost after a weir restart until the agent restarted. With the ID
// kept and boots raised, the sender's inform is answered with a signed
// notInTimeWindow Report carrying the new boots, from which it resyncs.
type engineState struct {
	ID    string `json:"engine_id"` // hex
	Boots uint32 `json:"boots"`
}

// startEngine returns the engine ID (binary) and boots for this start and
// keeps them in file. configured is the ID the config gives (hex, 0x
// allowed; "" for the one kept in file, or a new one); file "" keeps
// nothing: a new ID at each start, boots 1. A file that cannot be read as
// a state is reported in note.
//
// Boots must never go back for an ID senders may know (RFC 3414 section
// 2.2.2: a sender ignores a lower boots, and its informs are refused as out
// of time for ever). The kept ID's boots go up by one; a configured ID
// without its state (the file lost or broken) starts at bootsFloor, above
// any boots one start a minute could have reached.
func startEngine(file, configured string, now time.Time) (id string, boots uint32, note string, err error) {
	var kept engineState
	if file != "" {
		switch b, err := os.ReadFile(file); {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return "", 0, "", fmt.Errorf("engine state: %w", err)
		default:
			if err := json.Unmarshal(b, &kept); err != nil {
				kept, note = engineState{}, fmt.Sprintf("engine state %s unreadable (%v)", file, err)
			}
		}
	}
	var keptID string
	if kept.ID != "" {
		if b, err := hex.DecodeString(kept.ID); err == nil && validEngineID(b) {
			keptID = string(b)
		} else {
			note = fmt.Sprintf("engine state %s: engine_id %q is not 5 to 32 bytes in hex", file, kept.ID)
		}
	}
	bin, err := hex.DecodeString(configs.EngineIDHex(configured))
	switch {
	case err != nil:
		return "", 0, "", fmt.Errorf("engine_id %q: %w", configured, err)
	case configured != "" && !validEngineID(bin):
		return "", 0, "", fmt.Errorf("engine_id %q: %d octets, not 5 to 32", configured, len(bin))
	case configured != "":
		id = string(bin)
	default:
		id = keptID
	}
	switch {
	case id == "":
		id, boots = newEngineID(), 1
		if note != "" {
			note += ": a new engine"
		}
	case id == keptID && kept.Boots > 0:
		// Compared before adding: a damaged file's 2^32-1 plus one is 0.
		boots = maxBoots
		if kept.Boots < maxBoots {
			boots = kept.Boots + 1
		}
	case file != "" && configured != "":
		boots = bootsFloor(now)
		if note != "" {
			note += fmt.Sprintf("; engine_id %x starts at boots %d, above what it may have had", id, boots)
		}
	default:
		boots = 1
	}
	if file == "" {
		return id, boots, note, nil
	}
	if err := writeEngineState(file, engineState{ID: hex.EncodeToString([]byte(id)), Boots: boots}); err != nil {
		return "", 0, "", fmt.Errorf("engine state %s: %w", file, err)
	}
	return id, boots, note, nil
}

// bootsFloor is the boots of an engine ID whose count was lost: the
// minutes since 2020, which passes 2^31 in the year 6103.
func bootsFloor(now time.Time) uint32 {
	return uint32(max(now.Unix()-time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), 60) / 60)
}

// validEngineID: 5 to 32 octets (RFC 3411 SnmpEngineID).
func validEngineID(b []byte) bool { return len(b) >= 5 && len(b) <= 32 }

// writeEngineState replaces file with st, durably: boots must never go
// back, or a captured inform would be in time again. On a full disk it
// overwrites the file in place (overwriteInPlace): weir restarted to
// mend a full disk must start, and a new file needs space the old one
// does not.
func writeEngineState(file string, st engineState) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	// Padded to stateWidth, so the longest state (a 32-byte ID, boots
	// of ten digits) fits over the file in place.
	err = wholefile.Replace(file, padLine(b, stateWidth))
	if (errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)) && overwriteInPlace(file, b) == nil {
		return nil
	}
	return err
}

// padLine is b padded with spaces (white space JSON allows after a value)
// and a newline to size bytes, or b and a newline when longer.
func padLine(b []byte, size int) []byte {
	line := make([]byte, max(len(b)+1, size))
	copy(line, b)
	for i := len(b); i < len(line)-1; i++ {
		line[i] = ' '
	}
	line[len(line)-1] = '\n'
	return line
}

// stateWidth is the size of engine.json as written: the longest state
// (104 bytes) and room.
const stateWidth = 128

// overwriteInPlace writes b over file's own blocks, padded with white
// space (which JSON allows) to the file's size, and syncs it: no new
// block is needed on a file system that overwrites in place. It refuses
// a b longer than the file. Not atomic as a rename is: a power cut mid-
// write leaves a file startEngine reports unreadable, and a configured
// engine ID then starts at bootsFloor.
func overwriteInPlace(file string, b []byte) error {
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if int64(len(b)+1) > fi.Size() {
		return fmt.Errorf("%d bytes do not fit over %d", len(b)+1, fi.Size())
	}
	if _, err := f.WriteAt(padLine(b, int(fi.Size())), 0); err != nil {
		return err
	}
	return f.Sync()
}

// newEngineID makes an RFC 3411 engine ID: the high bit set, enterprise 0
// (none registered), format 5 (octets) and 8 random bytes.
func newEngineID() string {
	id := []byte{0x80, 0x00, 0x00, 0x00, 0x05, 0, 0, 0, 0, 0, 0, 0, 0}
	_, _ = rand.Read(id[5:])
	return string(id)
}
