package offline

import (
	"regexp"

	"github.com/hindsight-memory/hindsight/llm"
)

// taskRules are the keyword rules of each task type (see llm.TaskTypes),
// in the taxonomy's order, which also breaks ties. English keywords match
// whole words (with inflections); Chinese ones match anywhere.
var taskRules = []struct {
	name string
	re   *regexp.Regexp
}{
	{llm.TaskDataImport, regexp.MustCompile(`(?i)\b(import\w*|load(s|ed|ing)?|ingest\w*|csv|tsv|excel|xlsx?|parquet|etl|pars(e|es|ed|ing)|dataset|clean(ing)? (the )?data|warehouse)\b|导入|读取|解析|入库|加载|清洗|数据文件|表格`)},
	{llm.TaskReporting, regexp.MustCompile(`(?i)\b(reports?|reporting|dashboards?|charts?|graphs?|plots?|summar(y|ies|ise|ize)|weekly|monthly|quarterly|kpis?|visuali[sz]\w*|revenue)\b|报表|周报|日报|月报|季报|图表|柱状图|折线图|饼图|汇总|统计|可视化|报告`)},
	{llm.TaskDebugging, regexp.MustCompile(`(?i)\b(debug\w*|bugs?|fix(es|ed|ing)?|errors?|exceptions?|traceback|crash\w*|failing|broken|not working|root cause)\b|调试|修复|排查|报错|异常|崩溃|定位问题`)},
	{llm.TaskDeployment, regexp.MustCompile(`(?i)\b(deploy\w*|releas\w*|roll ?out|rollback|helm|kubernetes|k8s|docker|containers?|staging|production|ci/cd|pipelines?|upgrade)\b|部署|上线|发布|回滚|镜像|灰度`)},
	{llm.TaskCoding, regexp.MustCompile(`(?i)\b(implement\w*|refactor\w*|functions?|class(es)?|code|scripts?|unit tests?|pull request|pr|endpoints?|librar(y|ies)|compile\w*)\b|代码|实现|重构|函数|脚本|单元测试|接口开发`)},
	{llm.TaskWriting, regexp.MustCompile(`(?i)\b(draft\w*|emails?|letters?|blog|posts?|essays?|documentation|translat\w*|proofread\w*|rewrite|copy ?edit)\b|撰写|文档|邮件|翻译|文章|润色|文案`)},
	{llm.TaskResearch, regexp.MustCompile(`(?i)\b(research\w*|compar(e|es|ed|ing|ison)|find out|look up|survey|investigat\w*|evaluat\w*|which is better|pros and cons)\b|调研|对比|比较|查找|研究|搜索|评估`)},
	{llm.TaskOps, regexp.MustCompile(`(?i)\b(alerts?|incidents?|outages?|monitor\w*|on-call|latency|cpu|disk|backups?|restore|cron|restart\w*|logs?|uptime|capacity)\b|告警|故障|监控|重启|运维|备份|磁盘|延迟|扩容`)},
}

// classify scores text against the task rules: every distinct keyword in
// primary counts 3, in secondary 1. It returns "" when nothing matched.
func classify(primary string, secondary ...string) string {
	best, bestScore := "", 0
	for _, r := range taskRules {
		score := 3 * distinctMatches(r.re, primary)
		for _, s := range secondary {
			score += distinctMatches(r.re, s)
		}
		if score > bestScore {
			best, bestScore = r.name, score
		}
	}
	return best
}

func distinctMatches(re *regexp.Regexp, s string) int {
	seen := map[string]bool{}
	for _, m := range re.FindAllString(s, -1) {
		seen[fold(m)] = true
	}
	return len(seen)
}
