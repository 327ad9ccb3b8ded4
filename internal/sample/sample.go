// Package sample embeds the public Kalypso sample control plane for the demo.
package sample

import (
	"embed"
	"io/fs"
)

//go:embed all:data
var data embed.FS

// MainHead is the commit of the sample's main branch that the environments pin.
const MainHead = "4a0821c4376423b6a9e6b010bac8fe96616bd6e7"

// Environments returns the sample's environments, in promotion order.
func Environments() []string { return []string{"dev", "stage"} }

// FS returns one part of the sample: "main", "dev", "stage", "workload-sources", "gitops/dev", "gitops/stage".
func FS(part string) fs.FS {
	sub, err := fs.Sub(data, "data/"+part)
	if err != nil {
		panic(err) // the parts are fixed at build time
	}
	return sub
}
