package git

import "context"

// Browse opens url in the user's web browser with `git web--browse` (what git
// instaweb uses; web.browser and browser.<tool>.path choose the browser).
func (r *Repository) Browse(ctx context.Context, url string) error {
	_, err := r.git(ctx, "web--browse", url)
	return err
}
