// Package deps pins the project's chosen dependencies while the packages
// that use them are being written. It is removed once each is imported.
package deps

import (
	_ "github.com/dlclark/regexp2"
	_ "github.com/google/cel-go/cel"
	_ "github.com/hashicorp/go-plugin"
	_ "github.com/nlpodyssey/gopickle/pickle"
	_ "github.com/x448/float16"
	_ "golang.org/x/sys/cpu"
	_ "google.golang.org/grpc"
	_ "google.golang.org/protobuf/proto"
	_ "gopkg.in/yaml.v3"
)
