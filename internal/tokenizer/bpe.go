package tokenizer

import "math"

// noRank marks a boundary that does not merge with the next part (or was merged away).
const noRank = math.MaxUint32

// merger is byte-pair encoding of one piece at a time, its buffers kept between pieces: the
// piece's part boundaries as a linked list, and a heap of merge candidates. The pair of
// adjacent parts whose concatenation has the lowest rank merges first, the leftmost among
// equal ranks, until no adjacent pair is a token: O(n log n) in the piece's length n.
type merger struct {
	nodes []node
	heap  candidates
}

// node is the part boundary at its byte offset: the neighbouring boundaries (-1 at the ends)
// and the rank of this part merged with the next.
type node struct {
	prev, next int32
	rank       uint32
}

func (m *merger) merge(piece string, ranks map[string]uint32, yield func(uint32)) {
	n := int32(len(piece))
	m.nodes = m.nodes[:0]
	for i := int32(0); i <= n; i++ {
		m.nodes = append(m.nodes, node{prev: i - 1, next: i + 1, rank: noRank})
	}
	m.nodes[n].next = -1
	nodes := m.nodes
	rankOf := func(i int32) uint32 {
		j := nodes[i].next
		if j < 0 || nodes[j].next < 0 {
			return noRank
		}
		if r, ok := ranks[piece[i:nodes[j].next]]; ok {
			return r
		}
		return noRank
	}
	m.heap = m.heap[:0]
	for i := int32(0); i+2 <= n; i++ {
		if r := rankOf(i); r != noRank {
			nodes[i].rank = r
			m.heap = append(m.heap, candidate{r, i})
		}
	}
	m.heap.init()
	for len(m.heap) > 0 {
		c := m.heap.pop()
		i := c.at
		if nodes[i].rank != c.rank { // stale: the boundary merged or its rank changed since
			continue
		}
		j := nodes[i].next
		k := nodes[j].next
		nodes[j].rank = noRank
		nodes[i].next = k
		if k >= 0 {
			nodes[k].prev = i
		}
		for _, b := range [2]int32{i, nodes[i].prev} {
			if b < 0 {
				continue
			}
			if nodes[b].rank = rankOf(b); nodes[b].rank != noRank {
				m.heap.push(candidate{nodes[b].rank, b})
			}
		}
	}
	for i := int32(0); nodes[i].next >= 0; i = nodes[i].next {
		yield(ranks[piece[i:nodes[i].next]])
	}
}

type candidate struct {
	rank uint32
	at   int32
}

// candidates is a binary min-heap by rank, then offset.
type candidates []candidate

func (h candidates) less(a, b int) bool {
	return h[a].rank < h[b].rank || h[a].rank == h[b].rank && h[a].at < h[b].at
}

func (h candidates) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *candidates) push(c candidate) {
	*h = append(*h, c)
	for i := len(*h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			break
		}
		(*h)[i], (*h)[parent] = (*h)[parent], (*h)[i]
		i = parent
	}
}

func (h *candidates) pop() candidate {
	old := *h
	top := old[0]
	old[0] = old[len(old)-1]
	*h = old[:len(old)-1]
	h.down(0)
	return top
}

func (h candidates) down(i int) {
	for {
		child := 2*i + 1
		if child >= len(h) {
			return
		}
		if r := child + 1; r < len(h) && h.less(r, child) {
			child = r
		}
		if !h.less(child, i) {
			return
		}
		h[i], h[child] = h[child], h[i]
		i = child
	}
}
