package handlers

import "encoding/json"

// jsonUnmarshal decodes a webhook payload.
func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
