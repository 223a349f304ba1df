// Command mockllm is a scripted LLM server for benchmarks: it speaks OpenAI Chat Completions
// (POST …/chat/completions), OpenAI Responses (POST …/responses) and Anthropic Messages (POST …/messages), streaming, and answers
// each request with the next turn of a script file, whatever the request says, logging every
// request as a JSON line. See package github.com/reinhq/rein/bench/mock for the script format.
//
//	mockllm --script bench/scripts/task4.json --log requests.jsonl [--addr 127.0.0.1:8089]
//	        [--ttft 300ms] [--token-delay 10ms]
//
// It prints its base URL (http://ADDR/v1) on stdout and serves until interrupted.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/reinhq/rein/bench/mock"
)

func main() {
	script := flag.String("script", "", "script file (JSON; required)")
	logPath := flag.String("log", "", "append one JSON line per request to this file (default: none)")
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	ttft := flag.Duration("ttft", 0, "time to first token")
	tokenDelay := flag.Duration("token-delay", 0, "delay between streamed tokens")
	model := flag.String("model", "mock", "model id named in responses")
	flag.Parse()
	if err := run(*script, *logPath, *addr, *model, mock.Options{TTFT: *ttft, TokenDelay: *tokenDelay}); err != nil {
		fmt.Fprintln(os.Stderr, "mockllm:", err)
		os.Exit(1)
	}
}

func run(scriptPath, logPath, addr, model string, o mock.Options) error {
	if scriptPath == "" {
		return fmt.Errorf("--script is required")
	}
	s, err := mock.LoadScript(scriptPath)
	if err != nil {
		return err
	}
	var log io.Writer
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		log = f
	}
	o.Log, o.Model = log, model
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mock.New(s, o)}
	fmt.Printf("http://%s/v1\n", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.Shutdown(context.Background())
	}()
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		return err
	}
	return nil
}
