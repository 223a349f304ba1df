package lease

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// ProcessStart is the start time of process pid: /proc/PID/stat's 22nd field (clock ticks
// since boot). The fields after the command name are read past its closing parenthesis, which
// the name itself may contain.
func ProcessStart(pid int) (string, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", err
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return "", fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	// After ")": field 3 (state) onwards; the start time is field 22.
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 20 {
		return "", fmt.Errorf("/proc/%d/stat: %d fields after the command name", pid, len(fields))
	}
	return string(fields[19]), nil
}

func signalZero(pid int) bool { return syscall.Kill(pid, 0) == nil }
