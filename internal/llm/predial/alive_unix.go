//go:build unix

package predial

import (
	"errors"
	"net"
	"slices"
	"syscall"
)

// alive reports whether conn can carry a request: a non-blocking peek finds no end of
// stream, reset or unexpected bytes from the peer.
func alive(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	ok = false
	var buf [1]byte
	err = raw.Read(func(fd uintptr) bool {
		// Nothing to read yet: alive. Zero bytes: the peer closed it; bytes: the peer spoke
		// unasked; any other error: reset.
		_, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		ok = errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK)
		return true // never wait
	})
	return err == nil && ok
}

// drain reads, without waiting, what the peer has sent on conn and appends it to buf; it
// reports false when an end of stream or a reset lies behind it, or when buf would exceed
// max bytes.
func drain(conn net.Conn, buf []byte, max int) ([]byte, bool) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return buf, true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return buf, false
	}
	ok = false
	err = raw.Read(func(fd uintptr) bool {
		for len(buf) < max {
			if len(buf) == cap(buf) {
				buf = slices.Grow(buf, min(4096, max-len(buf)))
			}
			n, err := syscall.Read(int(fd), buf[len(buf):min(cap(buf), max)])
			switch {
			case n > 0:
				buf = buf[:len(buf)+n]
			case errors.Is(err, syscall.EINTR):
			default:
				// Nothing more yet: alive. Zero bytes: end of stream; any other error: reset.
				ok = errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK)
				return true
			}
		}
		return true // more than max: not handed over
	})
	return buf, err == nil && ok
}
