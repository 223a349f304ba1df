package llm

// Usage counts the tokens of one model request and what they cost.
//
// Input excludes cached tokens; CacheRead counts tokens served from a cache written by an
// earlier request; CacheWrite counts tokens written to the cache by this request.
type Usage struct {
	Input      int  `json:"input"`
	Output     int  `json:"output"`
	CacheRead  int  `json:"cacheRead"`
	CacheWrite int  `json:"cacheWrite"`
	Cost       Cost `json:"cost"`
}

// Cost is a usage priced in US dollars.
type Cost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`
}

// Total returns all tokens counted by u.
func (u Usage) Total() int { return u.Input + u.Output + u.CacheRead + u.CacheWrite }

// Add accumulates v into u.
func (u *Usage) Add(v Usage) {
	u.Input += v.Input
	u.Output += v.Output
	u.CacheRead += v.CacheRead
	u.CacheWrite += v.CacheWrite
	u.Cost.Input += v.Cost.Input
	u.Cost.Output += v.Cost.Output
	u.Cost.CacheRead += v.Cost.CacheRead
	u.Cost.CacheWrite += v.Cost.CacheWrite
	u.Cost.Total += v.Cost.Total
}

// Price fills u.Cost from per-million-token prices.
func (u *Usage) Price(p Pricing) {
	const m = 1e6
	u.Cost = Cost{
		Input:      p.Input * float64(u.Input) / m,
		Output:     p.Output * float64(u.Output) / m,
		CacheRead:  p.CacheRead * float64(u.CacheRead) / m,
		CacheWrite: p.CacheWrite * float64(u.CacheWrite) / m,
	}
	u.Cost.Total = u.Cost.Input + u.Cost.Output + u.Cost.CacheRead + u.Cost.CacheWrite
}
