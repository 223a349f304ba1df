package kernel

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// NewID returns a time-ordered unique id: 48 bits of Unix milliseconds then 80 random bits, as
// 32 hex digits (the layout of a UUIDv7 without its version bits). Ids sort by creation time.
func NewID() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	_, _ = rand.Read(b[6:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return hex.EncodeToString(b[:])
}
