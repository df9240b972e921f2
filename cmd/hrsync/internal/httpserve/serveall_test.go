package httpserve

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"
)

// ServeAll binds every address before it serves any: one address taken fails the call at once
// with a ListenError naming the server, and the addresses bound before it are let go, never
// having answered a request.
func TestServeAllBindsEveryAddressFirst(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freeAddr := free.Addr().String()
	free.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { t.Error("a request was answered") })
	err = ServeAll(ctx, slog.New(slog.DiscardHandler), []Server{
		{Name: "api", Addr: freeAddr, Handler: h},
		{Name: "metrics", Addr: taken.Addr().String(), Handler: h},
	})
	var le *ListenError
	if !errors.As(err, &le) || le.Name != "metrics" || le.Addr != taken.Addr().String() || !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("ServeAll = %v, want the metrics server's ListenError (address in use)", err)
	}
	if ctx.Err() != nil {
		t.Fatal("ServeAll waited for its context")
	}
	ln, err := net.Listen("tcp", freeAddr) // let go again
	if err != nil {
		t.Fatalf("the api's address was kept: %v", err)
	}
	ln.Close()
}
