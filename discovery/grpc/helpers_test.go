package grpc_test

import (
	"net/url"

	"google.golang.org/grpc/resolver"
)

func resolverTarget(s string) resolver.Target {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return resolver.Target{URL: *u}
}

func resolverBuildOptions() resolver.BuildOptions { return resolver.BuildOptions{} }
