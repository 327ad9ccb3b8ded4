//go:build tools

// Package tools pins the module dependencies that are not imported yet.
package tools

import (
	_ "github.com/Masterminds/sprig/v3"
	_ "github.com/bradleyfalzon/ghinstallation/v2"
	_ "github.com/go-git/go-git/v5"
	_ "github.com/google/go-github/v62/github"
	_ "github.com/palantir/go-githubapp/githubapp"
	_ "github.com/rcrowley/go-metrics"
	_ "github.com/rs/zerolog"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/stretchr/testify/require"
	_ "go.yaml.in/yaml/v2"
	_ "go.yaml.in/yaml/v3"
	_ "k8s.io/apimachinery/pkg/labels"
	_ "sigs.k8s.io/yaml"
	_ "github.com/mitchellh/hashstructure/v2"
	_ "github.com/golang-jwt/jwt/v4"
	_ "github.com/getkin/kin-openapi/openapi3"
)
