// Command benchtool is the measuring half of bench/compare.sh (the floor client it runs beside
// the harnesses is bench/cmd/floor, a program of its own).
//
//	benchtool freeport
//	    print a free loopback TCP port
//	benchtool run --out RESULT.json [--script S --addr 127.0.0.1:PORT --log REQUESTS.jsonl]
//	        [--ttft D] [--token-delay D] [--dir DIR] [--rpc LINE --rpc-until TEXT] [--timeout D] -- CMD ARGS...
//	    serve the mock LLM (package bench/mock) on ADDR, run CMD in DIR with this environment,
//	    and write its start and end times, CPU time and peak RSS (from wait4) as JSON
//	benchtool check --log REQUESTS.jsonl --requests N
//	    fail unless the mock saw exactly N requests, each answered from the script and each
//	    holding what the previous turn expected
//	benchtool fsync [--dir DIR] [--out FSYNC.json]
//	    measure the latency of appending and fsyncing a line on the file system of DIR
//	benchtool gaps --log REQUESTS.jsonl
//	    print the median gap per turn of one run (all, turns 1–50, turns 451–500)
//	benchtool report --results DIR --out REPORT.md --svg GAP.svg [--machine FILE]
//	    compute the statistics of a compare.sh run and write the report and the chart
package main

import (
	"fmt"
	"net"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "freeport":
		var ln net.Listener
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err == nil {
			fmt.Println(ln.Addr().(*net.TCPAddr).Port)
			ln.Close()
		}
	case "run":
		err = runCmd(os.Args[2:])
	case "check":
		err = checkCmd(os.Args[2:])
	case "fsync":
		err = fsyncCmd(os.Args[2:])
	case "gaps":
		err = gapsCmd(os.Args[2:])
	case "report":
		err = reportCmd(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtool:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: benchtool freeport | run … -- CMD ARGS… | check … | fsync … | report …")
	os.Exit(2)
}
