package importer

import "fmt"

// ScanAgenTeam reads an AgenTeam tree (.agenteam/).
func ScanAgenTeam(dir string) ([]*Plan, []Problem, error) {
	return nil, nil, fmt.Errorf("importing from agenteam is not built yet")
}
