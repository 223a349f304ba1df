package kernel

import (
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"time"
)

// NewID returns a time-ordered unique id: 48 bits of Unix milliseconds then 80 random bits, as
// 32 hex digits (the layout of a UUIDv7 without its version bits). Ids sort by creation time.
//
// The random bits come from the runtime's generator (ChaCha8, seeded from the operating
// system's entropy when the process starts), which costs no system call: the first
// crypto/rand read of a process maps and seeds the kernel's random state (~60 µs, on the path
// to the first model request). An id must be unique, never secret: nothing in rein grants
// access by knowing one (webhook secrets, process tags and blob names read crypto/rand).
func NewID() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	binary.BigEndian.PutUint64(b[8:], rand.Uint64())
	binary.BigEndian.PutUint16(b[6:8], uint16(rand.Uint32()))
	return hex.EncodeToString(b[:])
}
