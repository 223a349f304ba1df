package tui

import (
	"context"
	"errors"
	"fmt"
	"io"

	tea "charm.land/bubbletea/v2"

	"github.com/reinhq/rein/internal/kernel"
)

// Run opens the first runtime through host, runs the UI on the terminal (in, out) until the
// user quits or ctx ends (SIGINT, SIGTERM), then waits for the run in progress (cancelled,
// its cancel recorded first) and closes the runtime. Bubble Tea restores the terminal on
// every return, a panic in the UI included; a panic in a run is reported as its error.
func Run(ctx context.Context, host Host, in io.Reader, out io.Writer, environ []string, o Options) error {
	m, err := New(ctx, host, o)
	if err != nil {
		return err
	}
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithoutSignalHandler(), tea.WithInput(in), tea.WithOutput(out), tea.WithEnvironment(environ))
	_, runErr := p.Run()
	closeErr := m.Close()
	if errors.Is(runErr, tea.ErrProgramKilled) && ctx.Err() != nil {
		runErr = fmt.Errorf("%w: %w", kernel.ErrAborted, context.Cause(ctx))
	}
	return errors.Join(runErr, closeErr)
}
