package offline

import (
	"strings"

	"github.com/hindsight-memory/hindsight/llm"

	hlang "github.com/hindsight-memory/hindsight/lang"
)

// taskRule holds the keywords of one task type (see llm.TaskTypes): whole
// English words, English word prefixes (for inflections), English phrases,
// and Chinese terms matched anywhere.
type taskRule struct {
	name     string
	words    map[string]bool
	prefixes []string
	phrases  []string
	zh       []string
}

// taskRules are in the taxonomy's order, which also breaks ties.
var taskRules = []taskRule{
	{llm.TaskDataImport,
		wordSet(`load loads loaded loading csv tsv excel xlsx xls parquet etl dataset datasets warehouse`),
		strings.Fields(`import ingest parse parsing`),
		[]string{"clean the data", "cleaning data"},
		strings.Fields(`导入 读取 解析 入库 加载 清洗 数据文件 表格`)},
	{llm.TaskReporting,
		wordSet(`report reports reporting dashboard dashboards chart charts graph graphs plot plots summary summaries summarise summarize summarised summarized weekly monthly quarterly kpi kpis revenue`),
		strings.Fields(`visualis visualiz`),
		nil,
		strings.Fields(`报表 周报 日报 月报 季报 图表 柱状图 折线图 饼图 汇总 统计 可视化 报告`)},
	{llm.TaskDebugging,
		wordSet(`bug bugs fix fixes fixed fixing error errors exception exceptions traceback failing broken`),
		strings.Fields(`debug crash`),
		[]string{"not working", "root cause"},
		strings.Fields(`调试 修复 排查 报错 异常 崩溃 定位问题`)},
	{llm.TaskDeployment,
		wordSet(`helm kubernetes k8s docker container containers staging production pipeline pipelines upgrade rollout`),
		strings.Fields(`deploy releas rollback`),
		[]string{"roll out", "ci/cd"},
		strings.Fields(`部署 上线 发布 回滚 镜像 灰度`)},
	{llm.TaskCoding,
		wordSet(`function functions class classes code script scripts endpoint endpoints library libraries pr`),
		strings.Fields(`implement refactor compil`),
		[]string{"unit test", "pull request"},
		strings.Fields(`代码 实现 重构 函数 脚本 单元测试 接口开发`)},
	{llm.TaskWriting,
		wordSet(`email emails letter letters blog post posts essay essays documentation rewrite copyedit`),
		strings.Fields(`draft translat proofread`),
		nil,
		strings.Fields(`撰写 文档 邮件 翻译 文章 润色 文案`)},
	{llm.TaskResearch,
		wordSet(`survey`),
		strings.Fields(`research investigat evaluat compar`),
		[]string{"find out", "look up", "which is better", "pros and cons"},
		strings.Fields(`调研 对比 比较 查找 研究 搜索 评估`)},
	{llm.TaskOps,
		wordSet(`alert alerts incident incidents outage outages latency cpu disk backup backups restore cron log logs uptime capacity on-call`),
		strings.Fields(`monitor restart`),
		nil,
		strings.Fields(`告警 故障 监控 重启 运维 备份 磁盘 延迟 扩容`)},
}

// keywords returns the distinct keywords of r found in folded text.
func (r *taskRule) keywords(folded string, ws []string, into map[string]bool) {
	for _, w := range ws {
		if r.words[w] {
			into[w] = true
			continue
		}
		for _, p := range r.prefixes {
			if strings.HasPrefix(w, p) {
				into[p] = true
				break
			}
		}
	}
	for _, p := range r.phrases {
		if strings.Contains(folded, p) {
			into[p] = true
		}
	}
	for _, z := range r.zh {
		if strings.Contains(folded, z) {
			into[z] = true
		}
	}
}

// taskTypeOf scores text against the task rules: every distinct keyword in
// primary counts 3, in secondary 1. It returns "" when nothing matched.
func taskTypeOf(primary string, secondary ...string) string {
	type text struct {
		folded string
		words  []string
	}
	prep := func(s string) text {
		f := hlang.FoldQuotes(s)
		ws := words(f)
		for i, w := range ws {
			ws[i] = strings.Trim(w, ".-+")
		}
		return text{f, ws}
	}
	p := prep(primary)
	var sec []text
	for _, s := range secondary {
		sec = append(sec, prep(s))
	}
	best, bestScore := "", 0
	for i := range taskRules {
		r := &taskRules[i]
		found := map[string]bool{}
		r.keywords(p.folded, p.words, found)
		score := 3 * len(found)
		for _, s := range sec {
			clear(found)
			r.keywords(s.folded, s.words, found)
			score += len(found)
		}
		if score > bestScore {
			best, bestScore = r.name, score
		}
	}
	return best
}
