package githubsim

// routes registers every REST operation. Patterns follow GitHub's
// documentation; "{name...}" takes several path segments (refs, paths).
func (s *Server) routes() *router {
	rt := &router{}
	const repo = "/repos/{owner}/{repo}"
	// App and installations.
	rt.add("GET", "/app", authJWT, s.getApp)
	rt.add("GET", "/app/installations", authJWT, s.listInstallations)
	rt.add("GET", "/app/installations/{installation_id}", authJWT, s.getInstallation)
	rt.add("POST", "/app/installations/{installation_id}/access_tokens", authJWT, s.createAccessToken)
	rt.add("GET", repo+"/installation", authJWT, s.getRepoInstallation)
	rt.add("GET", "/orgs/{org}/installation", authJWT, s.getAccountInstallation)
	rt.add("GET", "/users/{username}/installation", authJWT, s.getAccountInstallation)
	rt.add("GET", "/orgs/{org}/teams/{team_slug}/members", authToken, s.listTeamMembers)
	rt.add("GET", "/installation/repositories", authToken, s.listInstallationRepos)
	rt.add("GET", "/user", authToken, s.getAuthenticatedUser)
	rt.add("DELETE", "/applications/{client_id}/token", authBasic, s.revokeUserToken)
	// Repository, branches, contents and commits.
	rt.add("GET", repo, authToken, s.getRepo)
	rt.add("GET", repo+"/branches/{branch...}", authToken, s.getBranch)
	rt.add("GET", repo+"/contents/{path...}", authToken, s.getContents)
	rt.add("PUT", repo+"/contents/{path...}", authToken, s.putContents)
	rt.add("GET", repo+"/commits", authToken, s.listCommits)
	rt.add("GET", repo+"/commits/{ref...}", authToken, s.getCommit)
	rt.add("GET", repo+"/compare/{basehead...}", authToken, s.compare)
	rt.add("GET", repo+"/collaborators/{username}/permission", authToken, s.getPermission)
	rt.add("POST", repo+"/dispatches", authToken, s.dispatch)
	// Git data.
	rt.add("GET", repo+"/git/ref/{ref...}", authToken, s.getRef)
	rt.add("GET", repo+"/git/refs/{ref...}", authToken, s.listRefs)
	rt.add("GET", repo+"/git/matching-refs/{ref...}", authToken, s.getMatchingRefs)
	rt.add("POST", repo+"/git/refs", authToken, s.createRef)
	rt.add("PATCH", repo+"/git/refs/{ref...}", authToken, s.updateRef)
	rt.add("DELETE", repo+"/git/refs/{ref...}", authToken, s.deleteRef)
	rt.add("GET", repo+"/git/blobs/{file_sha}", authToken, s.getBlob)
	rt.add("POST", repo+"/git/blobs", authToken, s.createBlob)
	rt.add("GET", repo+"/git/trees/{tree_sha...}", authToken, s.getTree)
	rt.add("POST", repo+"/git/trees", authToken, s.createTree)
	rt.add("GET", repo+"/git/commits/{commit_sha}", authToken, s.getGitCommit)
	rt.add("POST", repo+"/git/commits", authToken, s.createGitCommit)
	// Pull requests and their conversation.
	rt.add("GET", repo+"/pulls", authToken, s.listPulls)
	rt.add("POST", repo+"/pulls", authToken, s.createPull)
	rt.add("GET", repo+"/pulls/{pull_number}", authToken, s.getPull)
	rt.add("PATCH", repo+"/pulls/{pull_number}", authToken, s.updatePull)
	rt.add("GET", repo+"/pulls/{pull_number}/files", authToken, s.pullFiles)
	rt.add("PUT", repo+"/pulls/{pull_number}/merge", authToken, s.mergePull)
	rt.add("GET", repo+"/issues/{issue_number}/comments", authToken, s.listComments)
	rt.add("POST", repo+"/issues/{issue_number}/comments", authToken, s.createComment)
	rt.add("PATCH", repo+"/issues/comments/{comment_id}", authToken, s.updateComment)
	rt.add("GET", repo+"/issues/{issue_number}/labels", authToken, s.listLabels)
	rt.add("POST", repo+"/issues/{issue_number}/labels", authToken, s.addLabels)
	rt.add("DELETE", repo+"/issues/{issue_number}/labels/{name}", authToken, s.removeLabel)
	// Checks, statuses and deployments.
	rt.add("POST", repo+"/check-runs", authToken, s.createCheckRun)
	rt.add("GET", repo+"/check-runs/{check_run_id}", authToken, s.getCheckRun)
	rt.add("PATCH", repo+"/check-runs/{check_run_id}", authToken, s.updateCheckRun)
	rt.add("GET", repo+"/check-runs/{check_run_id}/annotations", authToken, s.listCheckRunAnnotations)
	rt.add("POST", repo+"/check-runs/{check_run_id}/rerequest", authToken, s.rerequestCheckRun)
	rt.add("GET", repo+"/commits/{ref...}/check-runs", authToken, s.listCheckRunsForRef)
	rt.add("POST", repo+"/statuses/{sha}", authToken, s.createStatus)
	rt.add("GET", repo+"/commits/{ref...}/status", authToken, s.combinedStatus)
	rt.add("GET", repo+"/commits/{ref...}/statuses", authToken, s.listStatuses)
	rt.add("GET", repo+"/deployments", authToken, s.listDeployments)
	rt.add("POST", repo+"/deployments", authToken, s.createDeployment)
	rt.add("GET", repo+"/deployments/{deployment_id}", authToken, s.getDeployment)
	rt.add("GET", repo+"/deployments/{deployment_id}/statuses", authToken, s.listDeploymentStatuses)
	rt.add("POST", repo+"/deployments/{deployment_id}/statuses", authToken, s.createDeploymentStatus)
	return rt
}
