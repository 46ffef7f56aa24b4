package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWatchSignals: the first signal cancels the command with a cause
// naming it; a second one exits at once with the first one's code (a
// command blocked in open(2) on a named pipe never looks at its context
// and, the signal being caught, could otherwise only be SIGKILLed).
func TestWatchSignals(t *testing.T) {
	tests := []struct {
		name    string
		signals []os.Signal
		exit    int // -1: exit must not be called
	}{
		{"one SIGTERM cancels only", []os.Signal{syscall.SIGTERM}, -1},
		{"two SIGTERMs exit 143", []os.Signal{syscall.SIGTERM, syscall.SIGTERM}, 143},
		{"SIGINT then SIGTERM exits 130", []os.Signal{os.Interrupt, syscall.SIGTERM}, 130},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, stop := context.WithCancelCause(context.Background())
			defer stop(nil)
			sigs := make(chan os.Signal, 2)
			finished := make(chan struct{})
			exited := make(chan int, 1)
			var errOut bytes.Buffer
			returned := make(chan struct{})
			go func() {
				watchSignals(sigs, stop, finished, &errOut, func(code int) { exited <- code })
				close(returned)
			}()
			for _, s := range tt.signals {
				sigs <- s
			}
			<-ctx.Done()
			var ie interrupted
			if !errors.As(context.Cause(ctx), &ie) || ie.signal != signalName(tt.signals[0]) {
				t.Errorf("cause = %v; want interrupted by %s", context.Cause(ctx), signalName(tt.signals[0]))
			}
			if tt.exit < 0 {
				close(finished)
				<-returned
				select {
				case code := <-exited:
					t.Errorf("exit(%d) after one signal", code)
				default:
				}
				return
			}
			select {
			case code := <-exited:
				if code != tt.exit {
					t.Errorf("exit(%d); want %d", code, tt.exit)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("a second signal did not exit")
			}
			if !strings.Contains(errOut.String(), "interrupted again") {
				t.Errorf("stderr %q does not say why it exits", errOut.String())
			}
			close(finished)
		})
	}
}
