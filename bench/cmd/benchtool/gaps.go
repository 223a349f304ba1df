package main

import (
	"flag"
	"fmt"
)

// gapsCmd prints the median gap per turn of one run's request log: all turns, and turns
// 1–50 and 451–500 when the run has them.
//
//	benchtool gaps --log REQUESTS.jsonl
func gapsCmd(args []string) error {
	fs := flag.NewFlagSet("gaps", flag.ContinueOnError)
	logPath := fs.String("log", "", "mock request log")
	if err := fs.Parse(args); err != nil {
		return err
	}
	entries, err := readLog(*logPath)
	if err != nil {
		return err
	}
	r := &run{entries: entries}
	fmt.Printf("{\"median_ms\": %.3f, \"turns_1_50_ms\": %.3f, \"turns_451_500_ms\": %.3f}\n",
		median(r.gaps()), sliceGap(r, 1, 50), sliceGap(r, 451, 500))
	return nil
}
