package llm

// Task types classify episodes and memories so that recall can narrow to
// "memories about reporting" or "lessons from deployments". The taxonomy is
// deliberately coarse: a type must be guessable from the first user request
// by rules as well as by a model, and stable across languages.
const (
	TaskDataImport = "data-import" // loading, parsing, converting or cleaning data files and tables
	TaskReporting  = "reporting"   // reports, summaries, dashboards, charts, exports for people
	TaskDebugging  = "debugging"   // finding and fixing the cause of an error or wrong behaviour
	TaskDeployment = "deployment"  // building, releasing, rolling out, configuring environments
	TaskCoding     = "coding"      // writing, changing, refactoring or testing code
	TaskWriting    = "writing"     // prose: emails, documents, translations, posts
	TaskResearch   = "research"    // finding, comparing and summarising information
	TaskOps        = "ops"         // operating running systems: alerts, incidents, monitoring, backups
	TaskOther      = "other"       // none of the above
)

// TaskTypes lists the task types in a stable order, each with the
// definition the prompt gives the model.
var TaskTypes = []struct{ Name, Definition string }{
	{TaskDataImport, "loading, parsing, converting or cleaning data files and tables (CSV, Excel, JSON, databases)"},
	{TaskReporting, "producing reports, summaries, dashboards, charts or exports for people"},
	{TaskDebugging, "finding and fixing the cause of an error, crash or wrong result"},
	{TaskDeployment, "building, releasing, rolling out or configuring software and environments"},
	{TaskCoding, "writing, changing, refactoring or testing code"},
	{TaskWriting, "writing prose: emails, documents, translations, posts"},
	{TaskResearch, "finding, comparing and summarising information"},
	{TaskOps, "operating running systems: alerts, incidents, monitoring, backups, capacity"},
	{TaskOther, "anything else"},
}

// ValidTaskType reports whether s is one of TaskTypes.
func ValidTaskType(s string) bool {
	for _, t := range TaskTypes {
		if t.Name == s {
			return true
		}
	}
	return false
}
