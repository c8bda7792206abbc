package mcpserver

// ToolArguments are the names of the arguments tool name takes (nil: no such tool).
func ToolArguments(name string) []string {
	for _, t := range tools() {
		if t.name != name {
			continue
		}
		fields, err := wireFields(t.in)
		if err != nil {
			panic(err)
		}
		names := []string{}
		for _, f := range fields {
			names = append(names, f.name)
		}
		return names
	}
	return nil
}
