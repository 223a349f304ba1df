package artifact_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/artifact"
)

func TestStoreRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s, err := artifact.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("Hello\nworld\n")
	d, err := s.Put(data)
	if err != nil {
		t.Fatal(err)
	}
	if d != helloWorld {
		t.Fatalf("Put = %s, want %s", d, helloWorld)
	}
	want := filepath.Join(dir, "sha256", "e0", "e0bfbb0c2d280fc86313ac988e6b5315d2a57844335cf62146b65b6a62820775")
	if p, _ := s.Path(d); p != want {
		t.Errorf("Path = %s, want %s", p, want)
	}
	if got, err := os.ReadFile(want); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("blob file: %q, %v", got, err)
	}
	got, err := s.Get(d)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Get = %q, %v", got, err)
	}
	// Idempotent, and exact bytes: a CRLF variant is another blob.
	if d2, err := s.Put(data); err != nil || d2 != d {
		t.Errorf("second Put = %s, %v", d2, err)
	}
	crlf, err := s.Put([]byte("Hello\r\nworld\r\n"))
	if err != nil || crlf == d {
		t.Errorf("CRLF Put = %s, %v; want a different digest", crlf, err)
	}
	empty, err := s.Put(nil)
	if err != nil || empty != emptySum {
		t.Errorf("empty Put = %s, %v", empty, err)
	}
	if got, err := s.Get(empty); err != nil || len(got) != 0 {
		t.Errorf("empty Get = %q, %v", got, err)
	}
	// No temporary file is left behind.
	err = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && filepath.Base(p)[0] == '.' && p != dir {
			t.Errorf("leftover %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestStoreCorruption(t *testing.T) {
	s, err := artifact.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Put([]byte("Hello\nworld\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := s.Path(d)
	for _, bad := range [][]byte{[]byte("Hello\nworld!\n"), []byte("Hello\nworld"), nil} {
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = s.Get(d)
		ce, ok := errors.AsType[*artifact.CorruptError](err)
		if !ok || !errors.Is(err, artifact.ErrCorrupt) {
			t.Fatalf("Get of %q = %v, want a *CorruptError", bad, err)
		}
		if ce.Want != d || ce.Got != artifact.Sum(bad) || ce.Path != p {
			t.Errorf("CorruptError = %+v", ce)
		}
	}
	// Put repairs a corrupt blob.
	if _, err := s.Put([]byte("Hello\nworld\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(d); err != nil {
		t.Errorf("after repair: %v", err)
	}

	_, err = s.Get(artifact.Sum([]byte("never stored")))
	if !errors.Is(err, artifact.ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing blob: %v, want ErrNotFound and fs.ErrNotExist", err)
	}
	for _, bad := range []artifact.Digest{"", "sha256:../../etc/passwd", artifact.Digest(helloWorld[7:])} {
		if _, err := s.Get(bad); !errors.Is(err, artifact.ErrInvalidDigest) {
			t.Errorf("Get(%q) = %v, want ErrInvalidDigest", bad, err)
		}
	}
}
