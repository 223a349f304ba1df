package main

// presizeStack grows the main goroutine's stack to 128 KB at once, while it holds two frames:
// the path to the first model request (cobra, cli, the composition root, the kernel, the HTTP
// client) otherwise grows it step by step as it deepens, and every growth copies the stack and
// adjusts each frame on it, reading the stack maps of each function (page faults on a cold
// start). The 64 KB frame is reserved, never written: untouched, its pages cost no memory.
// Measured in bench/NOTES.md ("The main goroutine's stack").
//
//go:noinline
func presizeStack(write bool) {
	if write {
		var frame [64 << 10]byte
		keepFrame(frame[:])
	}
}

//go:noinline
func keepFrame(b []byte) { b[0] = 1 }
