// KafkaJS as a Kafka client of weir's listener, for cmd/weir/kafkajs_test.go.
// Usage: node peer.js SCENARIO BROKER [ARGS...]. Each scenario writes one
// JSON object per line on stdout (what it did and saw) for the Go test to
// check, and exits non-zero with the error on stderr when KafkaJS fails.
'use strict'

const { Kafka, logLevel, CompressionTypes, CompressionCodecs, Partitioners } = require('kafkajs')
CompressionCodecs[CompressionTypes.Snappy] = require('kafkajs-snappy')

const [scenario, broker, ...args] = process.argv.slice(2)

const kafka = new Kafka({
  clientId: 'weir-kafkajs',
  brokers: [broker],
  logLevel: logLevel.ERROR,
  // Few retries: an error weir answers should fail the test, not be
  // retried for minutes.
  retry: { initialRetryTime: 100, retries: 3 }
})

const start = Date.now()
const out = obj => process.stdout.write(JSON.stringify({ ms: Date.now() - start, ...obj }) + '\n')
// fetchWait is the consumers' fetch long-poll: short, since KafkaJS only
// heartbeats, rejoins and stops between fetches.
const fetchWait = 500

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

// until polls cond every 50 ms until it holds, failing after 30 s.
async function until (what, cond) {
  for (const deadline = Date.now() + 30000; !(await cond()); await sleep(50)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
  }
}

const headersOf = hs => Object.fromEntries(Object.entries(hs || {}).map(([k, v]) =>
  [k, Array.isArray(v) ? v.map(x => x === null ? null : x.toString()) : v === null ? null : v.toString()]))

const recordOf = (topic, partition, m) => ({
  topic,
  partition,
  offset: m.offset,
  key: m.key === null ? null : m.key.toString(),
  value: m.value === null ? null : m.value.toString(),
  headers: headersOf(m.headers)
})

// consumeAll reads n records of topic from the beginning in group, prints
// each, and disconnects.
async function consumeAll (topic, group, n, opts = {}) {
  const consumer = kafka.consumer({ groupId: group, maxWaitTimeInMs: fetchWait, ...opts })
  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning: true })
  let got = 0
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      out({ consumed: recordOf(topic, partition, message) })
      got++
    }
  })
  await until(`${n} records of ${topic}`, () => got >= n)
  await consumer.disconnect()
  return got
}

const scenarios = {
  // admin TOPIC GROUP: topics and groups through KafkaJS's admin client.
  async admin (topic, group) {
    const admin = kafka.admin()
    await admin.connect()
    out({ created: await admin.createTopics({
      topics: [{ topic, numPartitions: 6, replicationFactor: 1, configEntries: [{ name: 'retention.ms', value: '3600000' }] }]
    }) })
    out({ createdAgain: await admin.createTopics({ topics: [{ topic, numPartitions: 6 }] }) })
    out({ listed: (await admin.listTopics()).includes(topic) })
    const meta = await admin.fetchTopicMetadata({ topics: [topic] })
    out({ metadata: meta.topics.map(t => ({ name: t.name, partitions: t.partitions.map(p => ({ id: p.partitionId, leader: p.leader, replicas: p.replicas, isr: p.isr, error: p.partitionErrorCode })) })) })
    const cluster = await admin.describeCluster()
    out({ cluster: { brokers: cluster.brokers.length, controller: cluster.controller, clusterId: cluster.clusterId } })
    const cfg = await admin.describeConfigs({ resources: [{ type: 2, name: topic, configNames: ['retention.ms'] }] })
    out({ retention: cfg.resources[0].configEntries.map(e => e.configValue) })

    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
    await producer.connect()
    await producer.send({ topic, messages: Array.from({ length: 12 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })) })
    await producer.disconnect()
    out({ topicOffsets: (await admin.fetchTopicOffsets(topic)).map(o => ({ partition: o.partition, low: o.low, high: o.high })).sort((a, b) => a.partition - b.partition) })

    // A member that stays, so describeGroups sees it.
    const consumer = kafka.consumer({ groupId: group, maxWaitTimeInMs: fetchWait })
    await consumer.connect()
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    let got = 0
    await consumer.run({ eachMessage: async () => { got++ } })
    await until('12 records', () => got >= 12)
    const committed = async () => (await admin.fetchOffsets({ groupId: group, topics: [topic] }))[0].partitions
    // eachMessage commits within autoCommitInterval (5 s) at most.
    await until('the commits', async () => (await committed()).reduce((s, p) => s + Number(p.offset), 0) === 12)
    const described = await admin.describeGroups([group])
    out({ group: described.groups.map(g => ({ id: g.groupId, state: g.state, protocolType: g.protocolType, protocol: g.protocol, members: g.members.length, error: g.errorCode })) })
    out({ groups: (await admin.listGroups()).groups.map(g => g.groupId) })
    await consumer.disconnect()
    out({ offsets: (await committed()).map(p => ({ partition: p.partition, offset: p.offset })).sort((a, b) => a.partition - b.partition) })
    await admin.setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '1' }] })
    out({ set: (await committed()).map(p => p.offset) })
    // resetOffsets commits -2 (earliest) or -1 (latest) as the offsets,
    // which Kafka stores as given; a member takes them as none.
    await admin.resetOffsets({ groupId: group, topic, earliest: true })
    out({ resetEarliest: (await committed()).map(p => p.offset) })
    out({ stateAfterReset: (await admin.describeGroups([group])).groups.map(g => g.state) })
    out({ consumedAfterReset: await consumeAll(topic, group, 12) })
    await admin.resetOffsets({ groupId: group, topic })
    out({ resetLatest: (await committed()).map(p => p.offset) })
    await admin.deleteGroups([group])
    out({ groupsAfterDelete: (await admin.listGroups()).groups.map(g => g.groupId) })
    await admin.deleteTopics({ topics: [topic] })
    out({ listedAfterDelete: (await admin.listTopics()).includes(topic) })
    await admin.disconnect()
  },

  // produce TOPIC: the same keyed records with headers from a plain
  // producer, an idempotent gzip one and a snappy one; each send's
  // partitions, then the records as a read_committed consumer reads them.
  async produce (topic) {
    const admin = kafka.admin()
    await admin.connect()
    await admin.createTopics({ topics: [{ topic, numPartitions: 6 }] })
    await admin.disconnect()
    const kinds = [
      { name: 'plain', producer: {}, compression: CompressionTypes.None },
      { name: 'idempotent-gzip', producer: { idempotent: true, maxInFlightRequests: 1 }, compression: CompressionTypes.GZIP },
      { name: 'snappy', producer: {}, compression: CompressionTypes.Snappy }
    ]
    let n = 0
    for (const kind of kinds) {
      const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, ...kind.producer })
      await producer.connect()
      const messages = Array.from({ length: 40 }, (_, i) => ({
        key: `device-${i}`,
        value: JSON.stringify({ kind: kind.name, i }),
        headers: { kind: kind.name, i: String(i), repeated: ['a', 'b'] }
      }))
      const acks = await producer.send({ topic, messages, compression: kind.compression, acks: -1 })
      out({ sent: kind.name, acks: acks.map(a => ({ partition: a.partition, error: a.errorCode })) })
      await producer.disconnect()
      n += messages.length
    }
    await consumeAll(topic, 'kafkajs-produce-check', n)
  },

  // transaction TOPIC: a transactional producer, which weir refuses.
  async transaction (topic) {
    const producer = kafka.producer({ transactionalId: 'kafkajs-txn', idempotent: true, maxInFlightRequests: 1 })
    try {
      await producer.connect()
      const txn = await producer.transaction()
      await txn.send({ topic, messages: [{ value: 'in a transaction' }] })
      await txn.commit()
      out({ committed: true })
    } catch (e) {
      out({ refused: e.name, type: e.type || null, message: e.message })
    } finally {
      await producer.disconnect()
    }
  },

  // group TOPIC GROUP: two consumers share the topic's partitions; one
  // leaves and the other takes all; the stayer stops after committing,
  // and a third member resumes from the commits.
  async group (topic, group) {
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
    await producer.connect()
    const produce = async (from, to) => producer.send({
      topic,
      messages: Array.from({ length: to - from }, (_, i) => ({ key: `k${from + i}`, value: `r${from + i}` }))
    })
    const member = name => {
      const c = kafka.consumer({ groupId: group, maxWaitTimeInMs: fetchWait, sessionTimeout: 10000, rebalanceTimeout: 10000, heartbeatInterval: 500 })
      c.assigned = []
      c.on(c.events.GROUP_JOIN, e => {
        c.assigned = Object.values(e.payload.memberAssignment).flat()
        out({ join: name, assigned: c.assigned.slice().sort((a, b) => a - b) })
      })
      return c
    }
    const run = (c, name) => c.run({
      eachMessage: async ({ topic, partition, message }) => {
        out({ member: name, consumed: recordOf(topic, partition, message) })
        seen.add(message.value.toString())
      }
    })
    const seen = new Set()

    const a = member('a')
    const b = member('b')
    await a.connect()
    await b.connect()
    await a.subscribe({ topics: [topic], fromBeginning: true })
    await b.subscribe({ topics: [topic], fromBeginning: true })
    await run(a, 'a')
    await run(b, 'b')
    await until('both members assigned', () => a.assigned.length > 0 && b.assigned.length > 0 && a.assigned.length + b.assigned.length === 6)
    out({ shared: { a: a.assigned.slice().sort((x, y) => x - y), b: b.assigned.slice().sort((x, y) => x - y) } })
    await produce(0, 60)
    await until('60 records', () => seen.size >= 60)

    await b.disconnect()
    await until('a takes every partition', () => a.assigned.length === 6)
    await produce(60, 90)
    await until('90 records', () => seen.size >= 90)
    await a.disconnect() // commits what it read
    out({ stopped: seen.size })

    await produce(90, 120)
    const c = member('c')
    await c.connect()
    await c.subscribe({ topics: [topic], fromBeginning: true })
    await run(c, 'c')
    await until('120 records', () => seen.size >= 120)
    await sleep(1000) // time for a duplicate, if the commits were lost
    await c.disconnect()
    await producer.disconnect()
    out({ done: seen.size })
  },

  // consume TOPIC N: N records of TOPIC from the beginning.
  async consume (topic, n) {
    await consumeAll(topic, 'kafkajs-consume', Number(n))
  }
}

const run = scenarios[scenario]
if (!run) {
  console.error(`unknown scenario ${scenario}; one of ${Object.keys(scenarios).join(', ')}`)
  process.exit(2)
}
run(...args).then(() => process.exit(0), e => {
  console.error(`kafkajs ${scenario}: ${e.stack || e}`)
  process.exit(1)
})
