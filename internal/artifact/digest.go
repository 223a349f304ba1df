package artifact

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

// Digest is a content digest in the form "sha256:" followed by 64 lowercase hexadecimal
// characters. The zero value is not a valid digest.
type Digest string

// DigestPrefix is the algorithm prefix of every Digest.
const DigestPrefix = "sha256:"

// Sum returns the digest of data.
func Sum(data []byte) Digest {
	sum := sha256.Sum256(data)
	return Digest(DigestPrefix + hex.EncodeToString(sum[:]))
}

// SumReader returns the digest of everything r yields, read in a stream (never held in memory).
func SumReader(r io.Reader) (Digest, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return Digest(DigestPrefix + hex.EncodeToString(h.Sum(nil))), nil
}

// SumFile returns the digest of the file at path, read in a stream: equal to Sum of its bytes,
// in constant memory however large the file (a binary, a big guidance file).
func SumFile(path string) (Digest, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	d, err := SumReader(f)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return d, nil
}

// ParseDigest checks that s is a digest in canonical form (lowercase hex) and returns it.
func ParseDigest(s string) (Digest, error) {
	d := Digest(s)
	if !d.Valid() {
		return "", fmt.Errorf("%w: %q (want %s followed by 64 lowercase hex characters)", ErrInvalidDigest, s, DigestPrefix)
	}
	return d, nil
}

// Valid reports whether d is in canonical form.
func (d Digest) Valid() bool {
	s := string(d)
	if len(s) != len(DigestPrefix)+64 || s[:len(DigestPrefix)] != DigestPrefix {
		return false
	}
	for i := len(DigestPrefix); i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Hex returns the 64 hex characters of a valid digest, or "" for an invalid one.
func (d Digest) Hex() string {
	if !d.Valid() {
		return ""
	}
	return string(d[len(DigestPrefix):])
}

// String returns d as it is.
func (d Digest) String() string { return string(d) }
