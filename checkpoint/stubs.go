package checkpoint

import "errors"

// Formats still being written; this file goes away as each lands.

var errTODO = errors.New("format not implemented yet")

// OpenPyTorch is not written yet.
func OpenPyTorch(path string) (Checkpoint, error) { return nil, errTODO }

func isLegacyTorch(head []byte) bool { return false }
