package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// fsyncResult is the fsync latency of a file system: N appends of Bytes bytes, each fsynced.
type fsyncResult struct {
	N        int     `json:"n"`
	Bytes    int     `json:"bytes"`
	MinMS    float64 `json:"min_ms"`
	MedianMS float64 `json:"median_ms"`
	MeanMS   float64 `json:"mean_ms"`
	P90MS    float64 `json:"p90_ms"`
	MaxMS    float64 `json:"max_ms"`
}

func fsyncCmd(args []string) error {
	fs := flag.NewFlagSet("fsync", flag.ContinueOnError)
	dir := fs.String("dir", os.TempDir(), "a folder on the file system to measure")
	n := fs.Int("n", 200, "appends")
	size := fs.Int("bytes", 600, "bytes per append")
	out := fs.String("out", "", "result file (JSON); default stdout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f, err := os.CreateTemp(*dir, "fsync-*.probe")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	line := make([]byte, *size)
	for i := range line {
		line[i] = 'x'
	}
	line[len(line)-1] = '\n'
	var d []float64
	for range *n {
		t := time.Now()
		if _, err := f.Write(line); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		d = append(d, ms(time.Since(t)))
	}
	sum := 0.0
	for _, x := range d {
		sum += x
	}
	sorted := slices.Sorted(slices.Values(d))
	r := fsyncResult{N: *n, Bytes: *size, MinMS: sorted[0], MedianMS: median(d), MeanMS: sum / float64(len(d)),
		P90MS: sorted[len(sorted)*9/10], MaxMS: sorted[len(sorted)-1]}
	data, _ := json.MarshalIndent(r, "", "  ")
	if *out == "" {
		_, err = os.Stdout.Write(append(data, '\n'))
		return err
	}
	return os.WriteFile(filepath.Clean(*out), append(data, '\n'), 0o644)
}
