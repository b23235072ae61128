//go:build tools

// Package tools names the commands this module pins, so that `go mod tidy` keeps every module
// they need in go.mod and go.sum; meshlab builds them with `go build -mod=readonly`.
package tools

import (
	_ "github.com/juanfont/headscale/cmd/headscale"
	_ "tailscale.com/cmd/tailscale"
	_ "tailscale.com/cmd/tailscaled"
)
