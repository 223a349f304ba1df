//go:build unix

package predial

import (
	"errors"
	"net"
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
