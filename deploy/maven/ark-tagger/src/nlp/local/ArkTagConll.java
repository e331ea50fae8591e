package nlp.local;

import cmu.arktweetnlp.Tagger;
import cmu.arktweetnlp.Twokenize;
import cmu.arktweetnlp.impl.ModelSentence;
import cmu.arktweetnlp.impl.Sentence;
import cmu.arktweetnlp.io.CoNLLReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Tags pre-tokenized tweets with the ARK tagger and times it without the JVM start-up.
 *
 * <p>Usage: {@code ArkTagConll [--model M] [--decoder greedy|viterbi] [--repeats N]
 * [--warmup-tokens W] [--raw] IN}.
 * IN is CoNLL: one token per line (TOKEN TAB anything), a blank line after each tweet; the
 * gold tokenization is kept (no Twokenize). With {@code --raw}, IN holds one raw tweet per
 * line, tokenized with the tagger's own Twokenize as RunTagger's text mode does, and each
 * output line is TOKEN TAB TAG. The model (default: the one shipped in the jar,
 * {@code /cmu/arktweetnlp/model.20120919}, as RunTagger) is loaded once; then the tweets are
 * tagged in this JVM, feature extraction and decoding exactly as RunTagger's CoNLL mode
 * does: pass 0 runs on a cold JIT; further untimed passes follow until W tokens (default
 * 20,000) have been tagged in all; then N timed passes, the warm ones a long-running tagger
 * sees. The timings list pass 0 and the N timed passes. Standard output: the tags of the last pass, one per line, a blank line after
 * each tweet. Last line of standard error: one JSON object with the timings in seconds, wall
 * clock ({@code passes_s}) and CPU time of the whole JVM ({@code passes_cpu_s}: all threads,
 * so JIT compilation and garbage collection count), which a busy machine disturbs less.
 */
public final class ArkTagConll {
  private ArkTagConll() {}

  private static void tagAll(Tagger tagger, List<Sentence> sentences, String decoder,
      int[][] labels) {
    for (int k = 0; k < sentences.size(); k++) {
      Sentence sentence = sentences.get(k);
      ModelSentence ms = new ModelSentence(sentence.T());
      tagger.featureExtractor.computeFeatures(sentence, ms);
      if (decoder.equals("greedy")) {
        tagger.model.greedyDecode(ms, false);
      } else {
        tagger.model.viterbiDecode(ms);
      }
      labels[k] = ms.labels;
    }
  }

  /** One tweet per line, tokenized by Twokenize (HTML entities unescaped first). */
  private static List<Sentence> readRaw(String input) throws java.io.IOException {
    List<Sentence> sentences = new ArrayList<>();
    for (String line : Files.readAllLines(Path.of(input), StandardCharsets.UTF_8)) {
      Sentence sentence = new Sentence();
      sentence.tokens = Twokenize.tokenizeRawTweetText(line);
      sentences.add(sentence);
    }
    return sentences;
  }

  public static void main(String[] args) throws Exception {
    String model = "/cmu/arktweetnlp/model.20120919";
    String decoder = "greedy";
    int repeats = 3;
    long warmupTokens = 20000;
    String input = null;
    boolean raw = false;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--model" -> model = args[++i];
        case "--decoder" -> decoder = args[++i];
        case "--repeats" -> repeats = Integer.parseInt(args[++i]);
        case "--warmup-tokens" -> warmupTokens = Long.parseLong(args[++i]);
        case "--raw" -> raw = true;
        default -> input = args[i];
      }
    }
    if (input == null || !(decoder.equals("greedy") || decoder.equals("viterbi"))) {
      System.err.println("usage: ArkTagConll [--model M] [--decoder greedy|viterbi] "
          + "[--repeats N] [--warmup-tokens W] [--raw] IN");
      System.exit(2);
    }
    long t0 = System.nanoTime();
    Tagger tagger = new Tagger();
    tagger.loadModel(model);
    double loadSeconds = (System.nanoTime() - t0) / 1e9;
    List<Sentence> sentences = raw ? readRaw(input) : CoNLLReader.readFile(input);
    int tokens = 0;
    for (Sentence s : sentences) {
      tokens += s.T();
    }
    int[][] labels = new int[sentences.size()][];
    double[] passes = new double[repeats + 1];
    double[] cpu = new double[repeats + 1];
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    long tagged = 0;
    double untimed = 0;
    for (int pass = 0, timed = 0; timed <= repeats; pass++) {
      long began = System.nanoTime();
      long cpuBegan = os.getProcessCpuTime();
      tagAll(tagger, sentences, decoder, labels);
      double wall = (System.nanoTime() - began) / 1e9;
      double cpuTime = (os.getProcessCpuTime() - cpuBegan) / 1e9;
      long before = tagged;
      tagged += tokens;
      if (pass == 0 || before >= warmupTokens) {  // pass 0 (cold) and the timed passes
        passes[timed] = wall;
        cpu[timed] = cpuTime;
        timed++;
      } else {
        untimed += wall;
      }
    }
    PrintWriter out = new PrintWriter(
        new OutputStreamWriter(System.out, StandardCharsets.UTF_8), false);
    for (int k = 0; k < labels.length; k++) {
      for (int t = 0; t < labels[k].length; t++) {
        String tag = tagger.model.labelVocab.name(labels[k][t]);
        out.println(raw ? sentences.get(k).tokens.get(t) + "\t" + tag : tag);
      }
      out.println();
    }
    out.flush();
    StringBuilder json = new StringBuilder();
    json.append("{\"load_model_s\": ").append(loadSeconds)
        .append(", \"sentences\": ").append(sentences.size())
        .append(", \"tokens\": ").append(tokens)
        .append(", \"decoder\": \"").append(decoder).append('"')
        .append(", \"warmup_s\": ").append(untimed)
        .append(", \"passes_s\": [");
    for (int p = 0; p < passes.length; p++) {
      json.append(p == 0 ? "" : ", ").append(passes[p]);
    }
    json.append("], \"passes_cpu_s\": [");
    for (int p = 0; p < cpu.length; p++) {
      json.append(p == 0 ? "" : ", ").append(cpu[p]);
    }
    System.err.println(json.append("]}"));
  }
}
